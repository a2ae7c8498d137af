/* global document, window, navigator, Element, HTMLFormElement -- browser script */
// The dashboard's only script (CSP: script-src 'self'): the copy buttons (a new key, the first
// request's snippets) and a confirmation dialog on dangerous forms. Every page works without it.
'use strict';

document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null;
  if (!button) return;
  const source = document.getElementById(button.getAttribute('data-copy') || '');
  // The status line of the button's own section (the key and the snippets each have one).
  const section = button.closest('section, .card');
  const status = (section && section.querySelector('.copied')) || document.querySelector('.copied');
  if (!source) return;
  const text = source.textContent || '';
  const done = (message) => {
    if (status) status.textContent = message;
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(
      () => done('Copied to the clipboard.'),
      () => done('Copy failed: select the text and copy it by hand.'),
    );
  } else {
    const range = document.createRange();
    range.selectNodeContents(source);
    const selection = window.getSelection();
    if (selection) {
      selection.removeAllRanges();
      selection.addRange(range);
    }
    done(
      document.execCommand && document.execCommand('copy')
        ? 'Copied to the clipboard.'
        : 'Selected: press Ctrl+C or Cmd+C.',
    );
  }
});

document.addEventListener('submit', (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.matches('form[data-confirm]')) return;
  if (!window.confirm(form.getAttribute('data-confirm') || 'Are you sure?')) event.preventDefault();
});

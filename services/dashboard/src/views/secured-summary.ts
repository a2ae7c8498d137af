/** The part of the page after a password reset that says what the old key had set going. */
import { html } from './html.ts';
import type { Html } from './html.ts';
import type { SecuredAccount } from '../gateway/client.ts';

/** What a reset stopped, for the owner to check (and resume what was theirs). */
export function securedSummary(secured: SecuredAccount): Html {
  const ids = (list: string[]) =>
    html`<ul>
      ${list.map((id) => html`<li><code>${id}</code></li>`)}
    </ul>`;
  return html`<section class="card" aria-labelledby="secured-title" id="secured">
    <h2 id="secured-title">What the old key had set going</h2>
    ${
      secured.webhook_secret_rotated
        ? html`<p>
            Your webhook signing secret was replaced, and the old one no longer signs: give your receivers the
            new one from the <a href="/webhooks">Webhooks</a> page.
          </p>`
        : ''
    }
    ${
      secured.paused_watches.length > 0
        ? html`<p>Paused watches (resume the ones you made on the <a href="/watches">Watches</a> page):</p>
            ${ids(secured.paused_watches)}`
        : ''
    }
    ${
      secured.canceled_jobs.length > 0
        ? html`<p>Canceled jobs (start again those you made):</p>
            ${ids(secured.canceled_jobs)}`
        : ''
    }
  </section>`;
}

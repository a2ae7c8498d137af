/**
 * The audit log page: the account's events, newest first, a page at a time — when, what (in words),
 * who (a key, the operator, or a person of this account by e-mail), on what, from where, and the
 * event's non-secret details.
 */
import type { Html } from './html.ts';
import { html } from './html.ts';
import { timeTag } from './dates.ts';
import { dataTable } from './table.ts';
import type { AuditEventView, AuditPage } from '../gateway/client.ts';
import type { Notice, PageContext } from './pages.ts';
import { layout, unverified } from './pages.ts';

/** The gateway's actions in words; an action it adds later shows as it is named. */
const ACTION_WORDS: Record<string, string> = {
  'key.created': 'Key made',
  'key.regenerated': 'Primary key regenerated',
  'key.revoked': 'Key revoked',
  'scope.refused': 'Call refused: the key lacks the scope',
  'source.refused': 'Call refused: not from an allowed network',
  'webhook_secret.rotated': 'Webhook secret rotated',
  'watch.created': 'Watch created',
  'watch.deleted': 'Watch deleted',
  'watch.resumed': 'Watch resumed',
  'account.updated': 'Account changed by an operator',
  'retention.changed': 'Data retention changed',
  'sign_in.succeeded': 'Signed in to the dashboard',
  'sign_in.failed': 'Failed sign-in to the dashboard',
  'password.reset': 'Password reset',
  'member.invited': 'Person invited',
  'invitation.withdrawn': 'Invitation withdrawn',
  'member.added': 'Member joined',
  'member.role_changed': 'Role changed',
  'member.removed': 'Member removed',
  'account.exported': 'Data exported',
};

export const actionText = (action: string) => ACTION_WORDS[action] ?? action;

export interface AuditView {
  page: AuditPage;
  /** E-mails of this account's people by their dashboard user id (the `member` actors it knows). */
  members: ReadonlyMap<string, string>;
  /** Whether this page was reached with a cursor (an older page): offers the way back to the newest. */
  older: boolean;
}

function actorCell(actor: AuditEventView['actor'], members: ReadonlyMap<string, string>): Html {
  if (actor.type === 'operator') return html`operator`;
  if (actor.type === 'key') return html`key <code>${actor.id ?? '?'}</code>`;
  if (actor.id === null) return html`unknown person`;
  const email = members.get(actor.id);
  return email ? html`${email}` : html`person <code>${actor.id}</code>`;
}

function detailValue(value: AuditEventView['details'][string]): string {
  if (value === null) return 'none';
  if (Array.isArray(value)) return value.length ? value.join(', ') : 'none';
  return String(value);
}

function detailsCell(details: AuditEventView['details']): Html {
  const entries = Object.entries(details);
  if (entries.length === 0) return html`—`;
  return html`${entries.map(
    ([name, value], i) =>
      html`${i ? html`<br />` : ''}<span class="hint">${name}:</span> ${detailValue(value)}`,
  )}`;
}

function eventRow(event: AuditEventView, members: ReadonlyMap<string, string>): Html {
  return html`<tr data-action="${event.action}">
    <td>${timeTag(event.at)}</td>
    <th scope="row">${actionText(event.action)}</th>
    <td>${actorCell(event.actor, members)}</td>
    <td>${event.target ? html`${event.target.type} <code>${event.target.id}</code>` : '—'}</td>
    <td>${event.source_ip ? html`<code>${event.source_ip}</code>` : '—'}</td>
    <td>${detailsCell(event.details)}</td>
  </tr>`;
}

export function auditLogPage(ctx: PageContext, view: AuditView | null, notice?: Notice | null): string {
  if (!view) return layout(ctx, 'Audit log', notice ? html`` : unverified(ctx), notice);
  const { page, members } = view;
  const intro = html`<p>
    What was done with this account's keys and settings, and by whom: the keys' changes, calls refused for a
    missing scope or a network not allowed, sign-ins to this dashboard. Newest first.
  </p>`;
  const table =
    page.events.length === 0
      ? html`<p id="no-events">${view.older ? 'No older events.' : 'Nothing recorded yet.'}</p>`
      : dataTable({
          id: 'audit-events',
          label: 'Audit log',
          caption: 'Events, newest first',
          columns: ['When', 'What', 'Who', 'Target', 'From', 'Details'],
          rows: page.events.map((event) => eventRow(event, members)),
        });
  const links = [
    view.older ? html`<a id="newest-page" href="/audit">Newest</a>` : '',
    page.next_cursor
      ? html`<a id="older-page" href="/audit?cursor=${encodeURIComponent(page.next_cursor)}">Older</a>`
      : '',
  ].filter((link) => link !== '');
  const nav = links.length
    ? html`<p class="pager">${links.map((link, i) => html`${i ? ' · ' : ''}${link}`)}</p>`
    : '';
  return layout(ctx, 'Audit log', html`${intro}${table}${nav}`, notice);
}

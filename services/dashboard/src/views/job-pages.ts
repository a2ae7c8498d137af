/** The pages of bulk jobs: the account's jobs and its webhook signing secret (pages.ts has the layout). */
import { html } from './html.ts';
import { timeTag } from './dates.ts';
import { dataTable } from './table.ts';
import type { JobsPage, WebhookSecret } from '../gateway/client.ts';
import type { Notice, PageContext } from './pages.ts';
import { confirmedForm, layout, unverified } from './pages.ts';

/**
 * Webhooks: the account's signing secret, hidden in a details element until opened (no script
 * needed), with a copy button, and a Rotate form. `revealed` opens it (right after a rotation).
 */
export function webhooksPage(
  ctx: PageContext,
  secret: WebhookSecret | null,
  notice?: Notice | null,
  revealed = false,
): string {
  if (!secret) return layout(ctx, 'Webhooks', unverified(ctx), notice);
  const body = html`<div class="card">
      <h2>Signing secret</h2>
      <p>
        Bulk jobs created with a <code>webhook_url</code> call it when they complete, fail or are canceled,
        signed as the Standard Webhooks specification says (<code>webhook-id</code>,
        <code>webhook-timestamp</code>, <code>webhook-signature</code>). Verify each request with a Standard
        Webhooks library and this secret.
      </p>
      <details id="secret-details" ${revealed ? html`open` : ''}>
        <summary>Reveal signing secret</summary>
        <p class="key-row">
          <code id="webhook-secret" class="key">${secret.secret}</code>
          <button type="button" class="copy" data-copy="webhook-secret">Copy</button>
        </p>
        <p class="copied" role="status" aria-live="polite"></p>
      </details>
      <p class="hint">Created ${timeTag(secret.created_at)}.</p>
      ${
        secret.previous_secret_expires_at
          ? html`<p id="previous-secret">
              The previous secret also signs every delivery until
              ${timeTag(secret.previous_secret_expires_at)}.
            </p>`
          : ''
      }
    </div>
    <div class="card">
      <h2>Rotate the secret</h2>
      <p>
        A new secret signs every delivery from now on. The current one keeps signing alongside it for 24
        hours, so your receiver can switch to the new one without missing a delivery.
      </p>
      ${confirmedForm(ctx, {
        action: '/webhooks/rotate',
        id: 'confirm-rotate',
        dialog: 'Rotate the signing secret? The current one keeps signing for 24 hours.',
        label: 'I will switch my receiver to the new secret within 24 hours',
        button: html`<button type="submit">Rotate secret</button>`,
      })}
    </div>`;
  return layout(ctx, 'Webhooks', body, notice);
}

function progressText(p: JobsPage['jobs'][number]['progress']): string {
  const done = `${p.succeeded} succeeded, ${p.failed} failed, ${p.pending} pending`;
  return p.total === null ? `${done} (total not known yet)` : `${done} of ${p.total}`;
}

/** Jobs: the account's bulk jobs, newest first, a page at a time. */
export function jobsPage(ctx: PageContext, page: JobsPage | null, notice?: Notice | null): string {
  if (!page) return layout(ctx, 'Jobs', notice ? html`` : unverified(ctx), notice);
  const table =
    page.jobs.length === 0
      ? html`<p id="no-jobs">No jobs yet. Create one with <code>POST /api/v1/jobs</code>.</p>`
      : dataTable({
          id: 'jobs',
          label: 'Jobs',
          caption: 'Bulk jobs, newest first',
          columns: ['Job', 'Status', 'Source', 'Progress', 'Credits', 'Created', 'Finished'],
          rows: page.jobs.map(
            (job) =>
              html`<tr>
                <th scope="row"><code>${job.job_id}</code></th>
                <td class="status-${job.status}">${job.status}</td>
                <td>${job.source.type}</td>
                <td>${progressText(job.progress)}</td>
                <td>${job.credits_charged}</td>
                <td>${timeTag(job.created_at)}</td>
                <td>${job.finished_at ? timeTag(job.finished_at) : '—'}</td>
              </tr>`,
          ),
        });
  const next = page.next_cursor
    ? html`<p><a id="next-page" href="/jobs?cursor=${encodeURIComponent(page.next_cursor)}">Next page</a></p>`
    : '';
  return layout(ctx, 'Jobs', html`${table}${next}`, notice);
}

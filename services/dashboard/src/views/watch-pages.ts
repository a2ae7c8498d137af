/**
 * The Watches page: the account's watches, each with a Delete form, and a Resume form for a watch
 * paused after a compromise (pages.ts has the layout).
 */
import { html } from './html.ts';
import type { Html } from './html.ts';
import { timeTag } from './dates.ts';
import { dataTable } from './table.ts';
import type { WatchList, WatchSummary } from '../gateway/client.ts';
import type { Notice, PageContext } from './pages.ts';
import { confirmedForm, csrfField, layout, unverified } from './pages.ts';

function sourceText(source: WatchSummary['source']): Html {
  const what = source.type === 'search' ? `“${source.query ?? ''}”` : (source.url ?? '');
  return html`${source.type} <span class="hint">${what}</span>`;
}

function intervalText(minutes: number): string {
  if (minutes % 1_440 === 0) return minutes === 1_440 ? 'every day' : `every ${minutes / 1_440} days`;
  if (minutes % 60 === 0) return minutes === 60 ? 'every hour' : `every ${minutes / 60} hours`;
  return `every ${minutes} minutes`;
}

function lastRunText(last: WatchSummary['last_run']): Html {
  if (!last) return html`not yet`;
  if (last.error) return html`${timeTag(last.at)}: <span class="status-failed">${last.error.code}</span>`;
  const found = last.new_videos === 1 ? '1 new video' : `${last.new_videos} new videos`;
  return html`${timeTag(last.at)}: ${found}${last.job_id ? html` (job <code>${last.job_id}</code>)` : ''}`;
}

function nextRunCell(ctx: PageContext, w: WatchSummary): Html {
  if (!w.paused) return timeTag(w.next_run_at);
  return html`<span class="status-failed">paused</span> ${timeTag(w.paused.at)}
    <form method="post" action="/watches/${encodeURIComponent(w.watch_id)}/resume" class="row-form">
      ${csrfField(ctx)}<button type="submit">Resume</button>
    </form>`;
}

/** Watches: the account's watches, newest first, with Delete (confirmation box, CSRF). */
export function watchesPage(ctx: PageContext, list: WatchList | null, notice?: Notice | null): string {
  if (!list) return layout(ctx, 'Watches', notice ? html`` : unverified(ctx), notice);
  const table =
    list.watches.length === 0
      ? html`<p id="no-watches">
          No watches yet. Create one with <code>POST /api/v1/watches</code> (Pro tier and up): each run starts
          a bulk job for the new videos of a channel, a playlist or a search.
        </p>`
      : dataTable({
          id: 'watches',
          label: 'Watches',
          caption: 'Watches, newest first',
          columns: ['Watch', 'Source', 'Schedule', 'Last run', 'Next run', 'Webhook', 'Delete'],
          rows: list.watches.map(
            (w) =>
              html`<tr>
                <th scope="row"><code>${w.watch_id}</code></th>
                <td>${sourceText(w.source)}</td>
                <td>${intervalText(w.interval_minutes)}, ${w.runs} so far</td>
                <td>${lastRunText(w.last_run)}</td>
                <td>${nextRunCell(ctx, w)}</td>
                <td>${w.webhook_url ? html`<code>${w.webhook_url}</code>` : '—'}</td>
                <td>
                  ${confirmedForm(ctx, {
                    action: `/watches/${encodeURIComponent(w.watch_id)}/delete`,
                    id: `confirm-delete-${w.watch_id}`,
                    dialog: `Delete watch ${w.watch_id}? Jobs it started run on.`,
                    label: 'Stop this watch',
                    button: html`<button type="submit" class="danger">Delete</button>`,
                  })}
                </td>
              </tr>`,
          ),
        });
  const paused = list.watches.some((w) => w.paused)
    ? html`<p id="paused-watches">
        Paused watches were made with a key revoked after a password reset (or by an operator): they run on
        your credits, so resume only those you made yourself.
      </p>`
    : '';
  return layout(ctx, 'Watches', html`${paused}${table}`, notice);
}

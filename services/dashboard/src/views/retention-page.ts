/**
 * Data retention: how long the workspace keeps its jobs' results and chunks and its watches'
 * history, within its tier's caps (docs/api.md, "Data retention"). One form; an empty field is the
 * default. The gateway checks the caps; its refusal is shown with the form as it was sent.
 */
import type { RetentionField, RetentionSettings } from '../gateway/client.ts';
import { RETENTION_FIELDS } from '../gateway/client.ts';
import { timeTag } from './dates.ts';
import { html } from './html.ts';
import type { Notice, PageContext } from './pages.ts';
import { csrfField, layout, unverified } from './pages.ts';

/** What the form's fields hold: the days as typed, '' for the default. */
export type RetentionForm = Record<RetentionField, string>;

const LABELS: Readonly<Record<RetentionField, { label: string; default: string }>> = {
  job_results_days: {
    label: 'Job results, days after the job ends',
    default: 'empty: the service’s default (7 days unless configured otherwise)',
  },
  chunks_days: {
    label: 'Job chunks, days after the job ends',
    default: 'empty: as long as the results (never longer)',
  },
  watch_history_days: {
    label: 'Watch history, days a watch remembers a video it found',
    default: 'empty: as long as the watch exists',
  },
};

/** The form as the settings fill it. */
function retentionForm(settings: RetentionSettings): RetentionForm {
  const value = (days: number | null) => (days === null ? '' : String(days));
  return {
    job_results_days: value(settings.job_results_days),
    chunks_days: value(settings.chunks_days),
    watch_history_days: value(settings.watch_history_days),
  };
}

export function retentionPage(
  ctx: PageContext,
  settings: RetentionSettings | null,
  notice?: Notice | null,
  form: RetentionForm | null = settings ? retentionForm(settings) : null,
): string {
  if (!settings || !form) return layout(ctx, 'Data retention', unverified(ctx), notice);
  const body = html`<div class="card">
    <p>
      How long your workspace keeps what it made. Lowering a setting also deletes what is already older than
      the new setting, within minutes; raising one brings nothing back. Transcripts cached for everyone (by
      video and language) hold no data of yours and are not affected.
    </p>
    <form method="post" action="/retention" id="retention-form">
      ${csrfField(ctx)}
      ${RETENTION_FIELDS.map(
        (field) =>
          html`<p>
            <label for="${field}">${LABELS[field].label}</label>
            <input
              id="${field}"
              name="${field}"
              type="number"
              inputmode="numeric"
              min="1"
              max="${settings.caps[field]}"
              step="1"
              value="${form[field]}"
            />
            <span class="hint" id="${field}-hint"
              >At most ${settings.caps[field]} days on the ${settings.tier} tier;
              ${LABELS[field].default}.</span
            >
          </p>`,
      )}
      <button type="submit">Save</button>
    </form>
    ${settings.updated_at ? html`<p class="hint">Last changed ${timeTag(settings.updated_at)}.</p>` : ''}
  </div>`;
  return layout(ctx, 'Data retention', body, notice);
}

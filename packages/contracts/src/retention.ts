/**
 * How long a workspace (an account) keeps its data, written once: the field names, the cap table
 * per tier, the check of a change, and the JSON Schemas the gateway validates and documents the
 * public `/api/v1/account/retention` and its admin twin with. The gateway stores the settings on the
 * account document (`retention`); the job service reads them there and applies them to the data it
 * owns (services/jobs/src/retention). Import it as `@subx/contracts/retention`.
 */
import type { FromSchema } from 'json-schema-to-ts';
import { ACCOUNT_TIERS } from './admin-api.ts';
import type { AccountTier } from './admin-api.ts';

/**
 * What a workspace may keep for less (or, up to its tier's cap, longer) than the deployment's
 * default: a finished job's results, the chunks served from them, and a watch's history (the
 * videos it saw and the videos it still follows).
 */
export const RETENTION_FIELDS = ['job_results_days', 'chunks_days', 'watch_history_days'] as const;
export type RetentionField = (typeof RETENTION_FIELDS)[number];

/** The shortest any setting may be: a day. */
export const RETENTION_MIN_DAYS = 1;

/** The longest each tier may choose, per field: the one cap table (docs/api.md, "Data retention"). */
export const RETENTION_CAPS: Readonly<Record<AccountTier, Readonly<Record<RetentionField, number>>>> = {
  free: { job_results_days: 7, chunks_days: 7, watch_history_days: 30 },
  pro: { job_results_days: 30, chunks_days: 30, watch_history_days: 180 },
  business: { job_results_days: 90, chunks_days: 90, watch_history_days: 365 },
  enterprise: { job_results_days: 365, chunks_days: 365, watch_history_days: 730 },
};

/**
 * The settings as the account document holds them (`retention`). A field that is absent is not
 * set: the default applies (the deployment's JOB_RESULTS_TTL for results, as long as the results
 * for chunks, as long as the watch for its history). Absent as a whole: every default.
 */
export interface StoredRetention {
  job_results_days?: number;
  chunks_days?: number;
  watch_history_days?: number;
  /**
   * When the settings last changed (epoch ms). The job service shortens what it already stores
   * once it sees a change made after its last look (services/jobs/src/retention).
   */
  changed_at: number;
}

/** A change: a number of days sets a field, null puts it back to its default, absent leaves it. */
export type RetentionChange = Partial<Record<RetentionField, number | null>>;

/** What is wrong with a change for this tier (the field, the cap), or null when nothing is. */
export function retentionProblem(
  tier: AccountTier,
  change: RetentionChange,
): { field: RetentionField; max: number; message: string } | null {
  const caps = RETENTION_CAPS[tier];
  for (const field of RETENTION_FIELDS) {
    const days = change[field];
    if (days === undefined || days === null) continue;
    const max = caps[field];
    if (!Number.isSafeInteger(days) || days < RETENTION_MIN_DAYS || days > max) {
      return {
        field,
        max,
        message: `${field} must be a whole number of days from ${RETENTION_MIN_DAYS} to ${max} on the ${tier} tier; it is ${days}.`,
      };
    }
  }
  return null;
}

/**
 * What applies now: each field set, bounded by the tier's cap (a tier lowered after the setting
 * was chosen shortens it); null where the default applies.
 */
export function effectiveRetention(
  tier: AccountTier,
  stored: StoredRetention | null | undefined,
): Record<RetentionField, number | null> {
  const caps = RETENTION_CAPS[ACCOUNT_TIERS.includes(tier) ? tier : 'free'];
  const of = (field: RetentionField) => {
    const days = stored?.[field];
    return typeof days === 'number' ? Math.min(days, caps[field]) : null;
  };
  return {
    job_results_days: of('job_results_days'),
    chunks_days: of('chunks_days'),
    watch_history_days: of('watch_history_days'),
  };
}

const FIELD_DESCRIPTIONS: Readonly<Record<RetentionField, string>> = {
  job_results_days:
    'Days a job’s results are kept after it ends (then 410 JOB_EXPIRED); null: the deployment’s default (`JOB_RESULTS_TTL`, 7 days).',
  chunks_days:
    'Days a job’s chunks (`…/chunks` and the `chunks` of its results) are served after it ends, at most as long as its results; null: as long as the results.',
  watch_history_days:
    'Days a watch remembers a video it saw or still follows; null: as long as the watch exists (its newest 5,000 videos).',
};

const daysOrNull = (field: RetentionField) =>
  ({
    type: ['integer', 'null'],
    minimum: RETENTION_MIN_DAYS,
    description: FIELD_DESCRIPTIONS[field],
  }) as const;

export const updateRetentionBodySchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    job_results_days: daysOrNull('job_results_days'),
    chunks_days: daysOrNull('chunks_days'),
    watch_history_days: daysOrNull('watch_history_days'),
  },
} as const;
export type UpdateRetentionBody = FromSchema<typeof updateRetentionBodySchema>;

const capSchema = { type: 'integer', minimum: RETENTION_MIN_DAYS } as const;

export const retentionSettingsSchema = {
  type: 'object',
  required: ['account_id', 'tier', ...RETENTION_FIELDS, 'caps', 'updated_at'],
  additionalProperties: false,
  properties: {
    account_id: { type: 'string' },
    tier: { type: 'string', enum: ACCOUNT_TIERS },
    job_results_days: daysOrNull('job_results_days'),
    chunks_days: daysOrNull('chunks_days'),
    watch_history_days: daysOrNull('watch_history_days'),
    caps: {
      type: 'object',
      description: 'The most days the tier may choose, per field.',
      required: [...RETENTION_FIELDS],
      additionalProperties: false,
      properties: {
        job_results_days: capSchema,
        chunks_days: capSchema,
        watch_history_days: capSchema,
      },
    },
    updated_at: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'When the settings last changed; null: never set.',
    },
  },
} as const;
export type RetentionSettings = FromSchema<typeof retentionSettingsSchema>;

import { describe, expect, it } from 'vitest';
import { ACCOUNT_TIERS } from './admin-api.ts';
import { RETENTION_CAPS, RETENTION_FIELDS, effectiveRetention, retentionProblem } from './retention.ts';

describe('the retention caps', () => {
  it('grow with the tier and start at a week of results on the free tier', () => {
    expect(RETENTION_CAPS.free.job_results_days).toBe(7);
    for (const field of RETENTION_FIELDS) {
      const caps = ACCOUNT_TIERS.map((tier) => RETENTION_CAPS[tier][field]);
      expect(caps, field).toEqual([...caps].sort((a, b) => a - b));
      expect(caps[0], field).toBeGreaterThanOrEqual(1);
    }
  });
});

describe('a change of the settings', () => {
  it('may set each field from a day to the tier’s cap, or reset it (null)', () => {
    for (const tier of ACCOUNT_TIERS) {
      for (const field of RETENTION_FIELDS) {
        expect(retentionProblem(tier, { [field]: 1 })).toBeNull();
        expect(retentionProblem(tier, { [field]: RETENTION_CAPS[tier][field] })).toBeNull();
        expect(retentionProblem(tier, { [field]: null })).toBeNull();
      }
    }
    expect(retentionProblem('free', {})).toBeNull();
  });

  it('past the cap, below a day or not a whole number: names the field and the cap', () => {
    expect(retentionProblem('free', { job_results_days: 8 })).toEqual({
      field: 'job_results_days',
      max: 7,
      message: 'job_results_days must be a whole number of days from 1 to 7 on the free tier; it is 8.',
    });
    expect(retentionProblem('pro', { chunks_days: 0 })).toMatchObject({ field: 'chunks_days', max: 30 });
    expect(retentionProblem('business', { watch_history_days: 2.5 })).toMatchObject({
      field: 'watch_history_days',
      max: 365,
    });
    // The first field in error is the one named.
    expect(retentionProblem('free', { job_results_days: 3, chunks_days: 99 })?.field).toBe('chunks_days');
  });
});

describe('what applies', () => {
  it('is each field set, within the tier’s cap now; null where the default applies', () => {
    expect(effectiveRetention('pro', undefined)).toEqual({
      job_results_days: null,
      chunks_days: null,
      watch_history_days: null,
    });
    // Set on business, the account since moved down to free: the free caps bound it.
    expect(
      effectiveRetention('free', { job_results_days: 60, watch_history_days: 10, changed_at: 0 }),
    ).toEqual({ job_results_days: 7, chunks_days: null, watch_history_days: 10 });
  });
});

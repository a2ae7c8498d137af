/**
 * How long an ended job's results and chunks are kept: its account's data retention (read by
 * services/jobs/src/retention), else the deployment's JOB_RESULTS_TTL for both.
 */
export interface JobTtls {
  resultsMs: number;
  /** At most `resultsMs`: chunks are made from the results. */
  chunksMs: number;
}

/** The account's TTLs when its job ends. */
export type JobTtlsOf = (accountId: string) => Promise<JobTtls>;

/** The deployment's default for every account (no per-account settings read). */
export function fixedTtls(resultsMs: number): JobTtlsOf {
  return async () => ({ resultsMs, chunksMs: resultsMs });
}

/** The store's `finish` options for these TTLs. */
export function finishTtls(ttls: JobTtls): { resultsTtlMs: number; chunksTtlMs: number } {
  return { resultsTtlMs: ttls.resultsMs, chunksTtlMs: Math.min(ttls.chunksMs, ttls.resultsMs) };
}

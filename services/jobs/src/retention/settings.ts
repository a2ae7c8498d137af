/**
 * A workspace's data retention as the job service reads it: the settings live on the account
 * document the gateway keeps (`retention`, `@subx/contracts/retention`), in the store both share;
 * the job service only reads them, and alone changes what it stores (jobs, results, watches).
 */
import { ACCOUNTS_COLLECTION, DAY_MS } from '@subx/credits';
import type { AccountTier } from '@subx/contracts/admin-api';
import type { StoredRetention } from '@subx/contracts/retention';
import { effectiveRetention } from '@subx/contracts/retention';
import type { DocumentStore } from '@subx/ports';
import type { JobTtls } from '../jobs/ttls.ts';

type AccountRetentionDoc = { _id: string; tier: AccountTier; retention?: StoredRetention };

/** What applies to one account now. */
interface AccountRetentionNow {
  ttls: JobTtls;
  /** Days a watch remembers a video; null: as long as the watch exists. */
  historyDays: number | null;
}

export interface RetentionSettingsReader {
  of(accountId: string): Promise<AccountRetentionNow>;
  /** Accounts whose settings changed at or after `sinceMs`, oldest change first: their ids and when. */
  changedSince(sinceMs: number, limit: number): Promise<{ id: string; at: number }[]>;
}

export function createRetentionSettings(deps: {
  store: DocumentStore;
  /** JOB_RESULTS_TTL: results (and chunks) where the account sets nothing. */
  defaultResultsMs: number;
}): RetentionSettingsReader {
  const accounts = deps.store.collection<AccountRetentionDoc>(ACCOUNTS_COLLECTION);

  function now(doc: AccountRetentionDoc | null): AccountRetentionNow {
    const days = doc ? effectiveRetention(doc.tier, doc.retention) : null;
    const resultsMs = days?.job_results_days ? days.job_results_days * DAY_MS : deps.defaultResultsMs;
    const chunksMs = days?.chunks_days ? Math.min(days.chunks_days * DAY_MS, resultsMs) : resultsMs;
    return { ttls: { resultsMs, chunksMs }, historyDays: days?.watch_history_days ?? null };
  }

  return {
    async of(accountId) {
      return now(await accounts.findOne({ _id: accountId }));
    },
    async changedSince(sinceMs, limit) {
      const found = await accounts.find(
        { 'retention.changed_at': { $gte: sinceMs } },
        { sort: { 'retention.changed_at': 1, _id: 1 }, limit },
      );
      return found.map((doc) => ({ id: doc._id, at: doc.retention!.changed_at }));
    },
  };
}

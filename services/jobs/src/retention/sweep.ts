/**
 * The retention sweep every job-service replica runs (services/jobs/README.md, "Data retention"):
 *
 * 1. settings changed since its last look (the accounts' `retention.changed_at`) are applied to
 *    what is stored: the account's ended jobs have their expiry brought forward (never pushed
 *    back: a raised setting brings nothing back), its watches take the new `watch_history_days`;
 * 2. results past their job's `expires_at` are deleted, and jobs past `purge_at`;
 * 3. chunks past `chunks_expire_at` are closed (they are computed from the results when read, so
 *    nothing else is stored for them: closing is what ends them);
 * 4. watches whose history is due forget what they found before their `watch_history_days`.
 *
 * Every step is bounded (a batch per run) and idempotent, so replicas may sweep side by side: a
 * document is deleted once, a conditional update applies once, and each replica counts only what
 * its own calls removed (`subx_retention_swept_total`). No TTL index deletes any of this (the
 * document store port has none), so the metric counts every deletion there is.
 */
import { DuplicateKeyError } from '@subx/ports';
import type { Clock, DocumentStore, Logger } from '@subx/ports';
import { DAY_MS } from '@subx/credits';
import type { JobStore } from '../jobs/store.ts';
import type { WatchStore } from '../watches/store.ts';
import { forgetBefore } from '../watches/history.ts';
import { retentionMetrics } from './metrics.ts';
import type { RetentionSettingsReader } from './settings.ts';

/** The sweep's own state: how far it has looked at settings changes. */
const SWEEP_STATE_COLLECTION = 'retention_sweep';
const CHANGES_CURSOR_ID = 'settings_changes';
type SweepStateDoc = { _id: string; seen_until: number };

/**
 * How far back each look at settings changes starts again: a change written by a gateway whose
 * clock is behind, or seen late, is still found; applying one twice changes nothing.
 */
const CHANGES_OVERLAP_MS = 5 * 60_000;
/** A trimmed watch is looked at again after this (what it found ages meanwhile). */
const HISTORY_CHECK_EVERY_MS = 3_600_000;

interface RetentionSweepOptions {
  /** How often a run starts. Default 10 minutes. */
  intervalMs?: number;
  /** Jobs, watches and changed accounts one step of a run handles at most. Default 200. */
  batch?: number;
}

export interface RetentionSweep {
  /** One run of every step; resolves with what it removed. Runs never overlap in one process. */
  runOnce(): Promise<{ job_results: number; chunks: number; watch_history: number; accounts: number }>;
  start(): void;
  /** Stops the timer and waits for a run in progress, at most `timeoutMs`. */
  stop(timeoutMs?: number): Promise<void>;
}

export function createRetentionSweep(deps: {
  store: DocumentStore;
  jobs: JobStore;
  watches: WatchStore;
  settings: RetentionSettingsReader;
  clock: Clock;
  logger: Pick<Logger, 'warn'>;
  options?: RetentionSweepOptions;
}): RetentionSweep {
  const { jobs, watches, settings, clock, logger } = deps;
  const intervalMs = deps.options?.intervalMs ?? 10 * 60_000;
  const batch = deps.options?.batch ?? 200;
  const state = deps.store.collection<SweepStateDoc>(SWEEP_STATE_COLLECTION);
  const metrics = retentionMetrics();
  let timer: NodeJS.Timeout | null = null;
  let running: ReturnType<RetentionSweep['runOnce']> | null = null;

  /** One account's settings applied to its jobs (a bounded number of pages) and watches. */
  async function applyTo(accountId: string, nowMs: number): Promise<void> {
    const now = await settings.of(accountId);
    let afterId: string | null = null;
    for (let pages = 0; pages < 50; pages++) {
      ({ lastId: afterId } = await jobs.shortenRetention(accountId, now.ttls, { afterId, limit: batch }));
      if (afterId === null) break;
    }
    await watches.setHistoryDays(accountId, now.historyDays, nowMs);
  }

  /** Step 1: the changes since the last look, applied; the cursor moved past them. */
  async function applyChanges(nowMs: number): Promise<number> {
    const cursor = await state.findOne({ _id: CHANGES_CURSOR_ID });
    const since = Math.max(0, (cursor?.seen_until ?? 0) - CHANGES_OVERLAP_MS);
    const changed = await settings.changedSince(since, batch);
    for (const account of changed) await applyTo(account.id, nowMs);
    const last = changed.at(-1);
    // A full page may have more after it: the cursor moves to the last one applied, and the next
    // run goes on from there (its overlap re-applies a few, which changes nothing).
    const seenUntil = last ? last.at : (cursor?.seen_until ?? 0);
    // Only ever forward, whichever replica writes last.
    const forward = () =>
      state.updateOne(
        { _id: CHANGES_CURSOR_ID, seen_until: { $lt: seenUntil } },
        { $set: { seen_until: seenUntil } },
      );
    if (!cursor) {
      await state.insertOne({ _id: CHANGES_CURSOR_ID, seen_until: seenUntil }).catch(async (err: unknown) => {
        if (!(err instanceof DuplicateKeyError)) throw err;
        await forward();
      });
    } else if (seenUntil > cursor.seen_until) {
      await forward();
    }
    return changed.length;
  }

  /** Step 4: watches whose history is due forget what is older than their setting. */
  async function trimHistories(nowMs: number): Promise<number> {
    let removed = 0;
    for (const watch of await watches.historyDue(nowMs, batch)) {
      if (watch.history_days === undefined) continue;
      const kept = forgetBefore(watch, nowMs - watch.history_days * DAY_MS);
      const written = await watches.trimHistory(
        watch,
        { seen: kept.seen, seenMarks: kept.marks, pending: kept.pending },
        nowMs + HISTORY_CHECK_EVERY_MS,
        nowMs,
      );
      if (written) removed += kept.removed;
    }
    return removed;
  }

  async function sweep() {
    const nowMs = clock.now();
    const accounts = await applyChanges(nowMs);
    const purged = await jobs.purgeExpired(nowMs, batch);
    metrics.swept('job_results', purged.results);
    const chunks = await jobs.closeChunks(nowMs, batch);
    metrics.swept('chunks', chunks);
    const history = await trimHistories(nowMs);
    metrics.swept('watch_history', history);
    metrics.ran(clock.now());
    return { job_results: purged.results, chunks, watch_history: history, accounts };
  }

  function runOnce() {
    running ??= sweep().finally(() => {
      running = null;
    });
    return running;
  }

  return {
    runOnce,
    start() {
      if (timer) return;
      const tick = () => {
        void runOnce().catch((err: unknown) => logger.warn({ err }, 'retention sweep failed'));
      };
      timer = setInterval(tick, intervalMs);
      timer.unref();
      tick();
    },
    async stop(timeoutMs = 10_000) {
      if (timer) clearInterval(timer);
      timer = null;
      if (!running) return;
      let bound: NodeJS.Timeout | undefined;
      await Promise.race([
        running.catch(() => {}),
        new Promise<void>((resolve) => {
          bound = setTimeout(resolve, timeoutMs);
          bound.unref();
        }),
      ]);
      clearTimeout(bound);
    },
  };
}

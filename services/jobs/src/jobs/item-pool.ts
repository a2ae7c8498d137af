/**
 * A running job's items, kept flowing: at most `maxInFlight` (JOB_WINDOW_SIZE) are at the bulk
 * fan-out at once, each on its own, and the pool is refilled as they finish, so a slow item holds
 * its own place and nobody else's. A refill takes the items waiting (ones back for another
 * attempt, parked items now due, then the next items in source order) as one group
 * (item-group.ts: one credit reservation, committed for what was delivered once its last item is
 * recorded). It waits until a tenth of the pool is free, so a refill is rarely a single item.
 *
 * - Before each refill the lease is renewed and the job read: canceled, nothing new starts, and
 *   what is in flight is recorded (and charged) before the pool ends.
 * - An item with a stored result (a resumed job) is neither run nor charged again: the next items'
 *   results are read a stretch at a time before they are taken in.
 * - A failure worth retrying (a timeout, pacing) brings the item back after a backoff, up to
 *   JOB_ITEM_ATTEMPTS tries; its place goes to the next item meanwhile.
 * - The extraction queue unavailable (503) uses up no try: the item comes back and nothing starts
 *   for a while; an item answered 503 for longer than JOB_STALL_LIMIT_MS ends with it.
 * - A stream still live or being processed is parked (parked.ts) and taken back in once due.
 * - Out of credits: with items in flight (their reservations may come back), the pool waits for
 *   one group to close and tries again; with none, it ends.
 */
import { isAppError, toPublicErrorBody, type AppError } from '@subx/errors';
import { backoffDelay } from '@subx/ports';
import type { Clock, Logger } from '@subx/ports';
import type { FanOutOutcome } from '@subx/fanout';
import { failureItem, successItem } from '@subx/public-api';
import { invalidVideoUrlMessage } from '@subx/public-api';
import { startItemGroup, type ItemGroup, type ItemGroupDeps } from './item-group.ts';
import { resultId, type JobDoc, type JobItem, type JobResultDoc } from './model.ts';
import { isProcessing, processingRetryTime } from './parked.ts';
import { summaryOf, type JobProgress } from './progress.ts';
import type { JobStore } from './store.ts';

export interface ItemPoolDeps extends ItemGroupDeps {
  store: JobStore;
  clock: Clock;
  logger: Pick<Logger, 'warn'>;
  config: ItemGroupDeps['config'] & {
    JOB_ITEM_ATTEMPTS: number;
    JOB_STALL_LIMIT_MS: number;
    JOBS_POLL_MS: number;
    JOB_PROCESSING_WAIT_MS: number;
    JOB_PROCESSING_RETRY_MAX_SECONDS: number;
  };
  /** Items of one job at the fan-out at once. */
  maxInFlight: number;
  /** The lease owner (the runner's instance id): its refills' reservations are noted on the job under it. */
  owner: string;
  /** Backoffs and stall pauses (tests shorten them). */
  sleep(ms: number): Promise<void>;
  /** The runner's lease renewal: the job as it is now, or null when the run is to stop. */
  renew(jobId: string): Promise<JobDoc | null>;
  /** The run moved on (the lease heartbeat's bound on a stuck run). */
  touch(): void;
  metrics: { items(outcome: string, count: number): void };
}

export type PoolEnd =
  /** Every item has a result or is parked. */
  | { kind: 'done' }
  /** Canceled: nothing new started; what was in flight is recorded and charged. */
  | { kind: 'canceled' }
  /** Not even one more item could be paid for, and nothing was in flight. */
  | { kind: 'out-of-credits'; error: AppError }
  /** The lease is gone or the gateway stops: what was in flight is recorded. */
  | { kind: 'stopped' };

/** Runs the job's items to a result each (or into `parked`), saving progress as the prefix moves. */
export async function runItemPool(
  deps: ItemPoolDeps,
  job: JobDoc,
  items: readonly JobItem[],
  progress: JobProgress,
): Promise<PoolEnd> {
  const { store, clock, config, logger } = deps;
  const maxInFlight = Math.max(1, deps.maxInFlight);
  const refillAt = Math.max(1, Math.floor(maxInFlight / 10));
  /** How many next items' stored results one read covers (and one refill looks through at most). */
  const stretch = Math.max(50, maxInFlight);
  /** The next item in source order not taken in yet. */
  let cursor = progress.savedIndex;
  let readUpTo = cursor;
  /** Taken in and not started: back for another try, back from a stall, or not paid for yet. */
  const queue: number[] = [];
  /** Items in the pool's hands: queued, in flight, or waiting out a backoff. */
  const held = new Set<number>();
  const inFlight = new Set<number>();
  const attempts = new Map<number, number>();
  const unavailableSince = new Map<number, number>();
  let backingOff = 0;
  let openGroups = 0;
  let groups = 0;
  /** The extraction queue answered 503: nothing starts until the pause is over. */
  let paused = false;
  /** A reservation failed while groups held credits: try again once one closes. */
  let creditsShort = false;
  let ending: PoolEnd | null = null;
  let failure: { error: unknown } | null = null;

  let woken = false;
  let signal = () => {};
  const wake = () => {
    woken = true;
    signal();
  };
  async function nextEvent() {
    if (!woken) await new Promise<void>((resolve) => (signal = resolve));
  }

  async function record(
    index: number,
    success: boolean,
    item: Record<string, unknown>,
    credits: number,
    reservationId?: string | null,
  ) {
    const doc: JobResultDoc = {
      _id: resultId(job._id, index),
      job_id: job._id,
      index,
      success,
      item: { index, ...item },
      charged: credits > 0,
      credits,
      ...(credits > 0 && reservationId ? { reservation_id: reservationId } : {}),
      created_at: clock.now(),
    };
    const inserted = await store.insertResult(doc);
    held.delete(index);
    attempts.delete(index);
    unavailableSince.delete(index);
    if (inserted) {
      progress.settled(index, { success, credits });
      deps.metrics.items(success ? 'ok' : String(item.error_code ?? 'error'), 1);
      return true;
    }
    // Recorded already (by a run that lost this job): that result stands, charged where it was made.
    const stored = await store.result(job._id, index);
    if (stored) progress.settled(index, summaryOf(stored, deps.pricing));
    return false;
  }

  function pause() {
    if (paused) return;
    paused = true;
    logger.warn({ job_id: job._id, items: queue.length }, 'extraction queue unavailable; the job waits');
    void deps.sleep(Math.min(10_000, Math.max(500, config.JOBS_POLL_MS))).then(() => {
      paused = false;
      deps.touch();
      wake();
    });
  }

  function tryAgainLater(index: number, tries: number) {
    backingOff += 1;
    // A passing failure (a timeout, pacing): give the platform a moment rather than asking at once.
    void deps.sleep(backoffDelay({ baseMs: 1_000, maxMs: 10_000 }, tries)).then(() => {
      backingOff -= 1;
      queue.push(index);
      deps.touch();
      wake();
    });
  }

  async function handle(group: ItemGroup, k: number, index: number, outcome: FanOutOutcome) {
    const item = items[index]!;
    if (outcome.ok) {
      const cost = group.cost(k, outcome);
      const body = successItem(item.url, outcome.transcript, {
        format: job.options.format,
        includeTimestamps: job.options.include_timestamps,
        include: job.options.include,
        creditsUsed: cost,
      });
      if (await record(index, true, body, cost, group.reservationId)) group.delivered(cost);
      return;
    }
    const { error } = outcome;
    const now = clock.now();
    if (isProcessing(error)) {
      const at = processingRetryTime(job, error, now, config);
      if (at !== null) {
        // Not a passing failure: asking again seconds later finds it processing still.
        progress.park(index, at);
        held.delete(index);
        return;
      }
    }
    if (error.code === 'SERVICE_UNAVAILABLE') {
      // The queue down is not the item's fault: it uses up no try, up to JOB_STALL_LIMIT_MS.
      const since = unavailableSince.get(index) ?? now;
      unavailableSince.set(index, since);
      if (now - since <= config.JOB_STALL_LIMIT_MS) {
        queue.push(index);
        pause();
        return;
      }
    } else if (error.retryable && !isProcessing(error)) {
      const tries = (attempts.get(index) ?? 0) + 1;
      attempts.set(index, tries);
      if (tries < config.JOB_ITEM_ATTEMPTS) return tryAgainLater(index, tries);
    }
    // Final: not worth retrying, out of tries, 503 past the stall limit, or a stream still
    // processing past JOB_PROCESSING_WAIT_MS. Recorded, free.
    const message = toPublicErrorBody(error, '').error.message;
    await record(index, false, failureItem(item.url, item.video_id, error.code, message), 0);
  }

  /** Parked items due now and not in the pool already, in source order. */
  function dueParked(): number[] {
    const now = clock.now();
    return [...progress.parked]
      .filter(([index, at]) => at <= now && !held.has(index))
      .map(([index]) => index)
      .sort((a, b) => a - b);
  }

  async function readResults(from: number) {
    readUpTo = Math.min(items.length, from + stretch);
    for (const stored of await store.resultsBetween(job._id, from, readUpTo)) {
      progress.settled(stored.index, summaryOf(stored, deps.pricing));
    }
  }

  /** Up to `free` items to start: queued ones, due parked ones, then the next in source order. */
  async function pick(free: number, due: number[]): Promise<number[]> {
    const picked = queue.splice(0, free);
    const dueNow = due.slice(0, free - picked.length);
    // A due item that a run which then crashed already recorded stays done, and now counts.
    const stored = await Promise.all(dueNow.map((index) => store.result(job._id, index)));
    dueNow.forEach((index, k) => {
      const found = stored[k];
      if (found) return progress.settled(index, summaryOf(found, deps.pricing));
      attempts.delete(index);
      held.add(index);
      picked.push(index);
    });
    const invalid: number[] = [];
    const scanEnd = Math.min(items.length, cursor + stretch);
    while (picked.length < free && cursor < scanEnd) {
      if (cursor >= readUpTo) await readResults(cursor);
      const index = cursor++;
      if (progress.hasResult(index) || progress.parked.has(index)) continue;
      if (items[index]!.video_id === null) invalid.push(index);
      else {
        held.add(index);
        picked.push(index);
      }
    }
    // Not video URLs: failed at once, free.
    await Promise.all(
      invalid.map((index) => {
        const url = items[index]!.url;
        return record(index, false, failureItem(url, null, 'INVALID_URL', invalidVideoUrlMessage(url)), 0);
      }),
    );
    return picked;
  }

  function launch(group: ItemGroup) {
    openGroups += 1;
    let left = group.indexes.length;
    group.indexes.forEach((index, k) => {
      inFlight.add(index);
      void group
        .run(k)
        .then((outcome) => handle(group, k, index, outcome))
        .catch((error: unknown) => {
          failure ??= { error };
        })
        .then(async () => {
          // Its place is free once its outcome is recorded; the group's commit follows its last item.
          inFlight.delete(index);
          deps.touch();
          wake();
          if (--left > 0) return;
          const closed = await group.close().then(
            () => true,
            (error: unknown) => {
              failure ??= { error };
              return false;
            },
          );
          // Committed: nothing of it is left for a runner that resumes the job to settle.
          if (closed && group.reservationId) {
            await store.noteReservation(job._id, deps.owner, group.reservationId, false).catch(() => {});
          }
          openGroups -= 1;
          creditsShort = false;
          wake();
        });
    });
  }

  async function refill(free: number, due: number[]): Promise<void> {
    const current = await deps.renew(job._id);
    if (!current) {
      ending = { kind: 'stopped' };
      return;
    }
    // Canceled: what is recorded stays (and is charged); nothing new starts.
    if (current.status === 'canceled') {
      ending = { kind: 'canceled' };
      return;
    }
    const picked = await pick(free, due);
    if (picked.length === 0) return;
    const group = await startItemGroup(deps, job, items, picked, `${job._id}:g${groups++}`).catch(
      (error: unknown) => {
        queue.unshift(...picked);
        if (!isAppError(error) || error.code !== 'INSUFFICIENT_CREDITS') throw error;
        // Credits held by items in flight may come back (failures are free): wait for them.
        if (openGroups > 0) creditsShort = true;
        else ending = { kind: 'out-of-credits', error };
        return null;
      },
    );
    if (!group) return;
    queue.unshift(...picked.slice(group.indexes.length));
    if (group.reservationId) {
      // Noted before any of its items can be recorded: a runner that dies now leaves a reservation
      // the next one finds and settles. Not noted (the lease is gone): it is returned, nothing runs.
      const noted = await store.noteReservation(job._id, deps.owner, group.reservationId, true).then(
        () => true,
        () => false,
      );
      if (!noted) {
        queue.unshift(...group.indexes);
        await group.close().catch(() => {});
        ending = { kind: 'stopped' };
        return;
      }
    }
    launch(group);
  }

  for (;;) {
    woken = false;
    if (failure || ending) {
      if (inFlight.size === 0 && openGroups === 0) break;
      await nextEvent();
      continue;
    }
    try {
      if (progress.dueForSave() && !(await progress.save())) {
        ending = { kind: 'stopped' };
        continue;
      }
      const due = dueParked();
      const waiting = queue.length + due.length + (items.length - cursor);
      if (waiting === 0 && inFlight.size === 0 && backingOff === 0 && openGroups === 0) break;
      const free = maxInFlight - inFlight.size;
      const worthIt = free >= Math.min(refillAt, waiting) || inFlight.size === 0;
      if (!paused && !creditsShort && waiting > 0 && free > 0 && worthIt) {
        await refill(free, due);
        continue;
      }
    } catch (error) {
      failure ??= { error };
      continue;
    }
    await nextEvent();
  }
  if (failure) throw failure.error;
  return ending ?? { kind: 'done' };
}

/**
 * A running job's saved progress: how far its finished prefix reaches (`next_index`), which items
 * are parked, and the counts (succeeded, failed, credits) of the results below that prefix.
 *
 * Items finish out of order (item-pool.ts), but what is saved is a prefix: `next_index` moves to
 * the first item that has neither a result nor a place in `parked`, and one conditional update
 * moves it together with the parked list and the counts of the results it passed (and of parked
 * items that got theirs), so a crash never counts a result twice nor loses a parked item. A result
 * past the prefix is counted when the prefix passes it; a runner that resumes the job finds it
 * among the stored results and neither runs nor charges its item again.
 */
import type { Clock } from '@subx/ports';
import { itemsPrice, type AccessPricing } from '@subx/credits';
import type { JobDoc, JobResultDoc } from './model.ts';
import { parkedDoc, parkedFromDoc } from './parked.ts';
import type { JobStore } from './store.ts';

/** What one result adds to the job's counts. */
export interface ResultSummary {
  success: boolean;
  credits: number;
}

export interface ProgressCounts {
  succeeded: number;
  failed: number;
  charged: number;
}

/** A stored result's share of the counts (results stored before `credits` existed: the item price if charged). */
export function summaryOf(result: JobResultDoc, pricing: AccessPricing): ResultSummary {
  return {
    success: result.success,
    credits: result.credits ?? (result.charged ? itemsPrice(1, pricing) : 0),
  };
}

/** Saved at least this often while the prefix moves (besides every JOB_WINDOW_SIZE items). */
const SAVE_EVERY_MS = 1_000;

export interface JobProgress {
  /** `next_index` as last saved: every item below it has a result or is parked. */
  readonly savedIndex: number;
  /** Items parked now: index → when to ask again (epoch ms). */
  readonly parked: ReadonlyMap<number, number>;
  hasResult(index: number): boolean;
  /** The item has a result (recorded now, or found stored); it leaves `parked`. */
  settled(index: number, summary: ResultSummary): void;
  park(index: number, atMs: number): void;
  /** The first item with neither a result nor a place in `parked`. */
  prefix(): number;
  /** The prefix moved JOB_WINDOW_SIZE items, or something is unsaved for a second. */
  dueForSave(): boolean;
  /** Moves `next_index` to the prefix with the parked list and counts; false: the lease is gone. */
  save(): Promise<boolean>;
  /**
   * The counts of every known result not counted yet, past the prefix too: what a job that ends
   * now (canceled, out of credits) adds in the update that ends it.
   */
  uncounted(): ProgressCounts;
  /** Saves like `save`, with every known result counted (a canceled job's last update). */
  saveAll(): Promise<boolean>;
}

export function createJobProgress(deps: {
  store: JobStore;
  clock: Clock;
  instanceId: string;
  job: JobDoc;
  total: number;
  saveEveryItems: number;
}): JobProgress {
  const { store, clock, instanceId, job, total } = deps;
  let savedIndex = job.next_index;
  const parked = parkedFromDoc(job);
  /** Parked as last saved: their results, once known, are not counted yet. */
  let savedParked = new Set(parked.keys());
  /** Results known and not counted yet (and those past the prefix), index → summary. */
  const results = new Map<number, ResultSummary>();
  /** Past the prefix yet counted: a canceled job's last update counts everything (`saveAll`). */
  const countedPast = new Set<number>();
  let prefixAt = savedIndex;
  let dirty = false;
  let lastSave = clock.now();

  const counted = (index: number) =>
    (index < savedIndex && !savedParked.has(index)) || countedPast.has(index);

  function prefix(): number {
    while (prefixAt < total && (results.has(prefixAt) || parked.has(prefixAt))) prefixAt += 1;
    return prefixAt;
  }

  function countsOf(include: (index: number) => boolean): ProgressCounts {
    const counts = { succeeded: 0, failed: 0, charged: 0 };
    for (const [index, summary] of results) {
      if (counted(index) || !include(index)) continue;
      if (summary.success) counts.succeeded += 1;
      else counts.failed += 1;
      counts.charged += summary.credits;
    }
    return counts;
  }

  async function saveUpTo(all: boolean): Promise<boolean> {
    const to = prefix();
    const counts = countsOf((index) => all || index < to);
    const saved = await store.advance(
      job._id,
      instanceId,
      { from: savedIndex, to, parked: parkedDoc(parked), ...counts },
      clock.now(),
    );
    if (!saved) return false;
    savedIndex = to;
    savedParked = new Set(parked.keys());
    if (all) for (const index of results.keys()) if (index >= to) countedPast.add(index);
    for (const index of results.keys()) if (counted(index)) results.delete(index);
    dirty = false;
    lastSave = clock.now();
    return true;
  }

  return {
    get savedIndex() {
      return savedIndex;
    },
    parked,
    hasResult: (index) => results.has(index) || counted(index),
    settled(index, summary) {
      if (counted(index)) return;
      results.set(index, summary);
      parked.delete(index);
      dirty = true;
    },
    park(index, atMs) {
      parked.set(index, atMs);
      dirty = true;
    },
    prefix,
    dueForSave() {
      if (prefix() - savedIndex >= deps.saveEveryItems) return true;
      return dirty && clock.now() - lastSave >= SAVE_EVERY_MS;
    },
    save: () => saveUpTo(false),
    saveAll: () => saveUpTo(true),
    uncounted: () => countsOf(() => true),
  };
}

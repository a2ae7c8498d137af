/**
 * One partition's messages in flight with `perPartitionConcurrency` above 1, for one generation of
 * the group (a rebalance fetches again from the committed offsets, into fresh windows). Messages
 * start in offset order as slots free up and finish in any order; the commit moves up to the lowest
 * unfinished one, so nothing after a slow or failing message is committed before it. Pure
 * bookkeeping: the member (member.ts) runs the handlers and sends the commits.
 */
import { MAX_UNCOMMITTED_SPAN } from '../shared.ts';

export interface BatchWindow {
  /** Started and not handled (running, backing off, or given up on at stop), ascending. */
  unfinished: bigint[];
  running: number;
  /** The offset after the last message started. */
  next: bigint;
  /** The highest offset committed from this window. */
  committed: bigint;
  /** Commits run one after another, so a lower one never lands after a higher one. */
  commits: Promise<void>;
  /** Replaced (rebalance, or a delivery that failed outside the handler): commits only if still ours. */
  stale: boolean;
}

/** A window whose first message is `offset`. */
export function openWindow(offset: bigint): BatchWindow {
  return {
    unfinished: [],
    running: 0,
    next: offset,
    committed: -1n,
    commits: Promise.resolve(),
    stale: false,
  };
}

/** Fetched again in this generation (kafkajs reset its position): started already. */
export function startedAlready(window: BatchWindow, offset: bigint): boolean {
  return offset < window.next;
}

export interface SlotLimits {
  /** Messages of the whole member in flight now, and its cap. */
  inFlight: number;
  maxInFlight: number;
  /** The partition's `perPartitionConcurrency`. */
  perPartition: number;
}

/**
 * Whether the message at `offset` may start now: the member's `maxInFlight`, the partition's
 * `perPartitionConcurrency`, and at most MAX_UNCOMMITTED_SPAN past the lowest unfinished message.
 */
export function hasSlotFor(window: BatchWindow, offset: bigint, limits: SlotLimits): boolean {
  return (
    limits.inFlight < limits.maxInFlight &&
    window.running < limits.perPartition &&
    offset - (window.unfinished[0] ?? offset) < BigInt(MAX_UNCOMMITTED_SPAN)
  );
}

/** The message at `offset` starts. */
export function startMessage(window: BatchWindow, offset: bigint): void {
  window.unfinished.push(offset);
  window.running++;
  window.next = offset + 1n;
}

/** The message at `offset` stopped running, handled or not (a message not handled stays unfinished). */
export function stopRunning(window: BatchWindow): void {
  window.running--;
}

/**
 * The message at `offset` is handled: the offset the partition's commit may move up to now (the
 * lowest unfinished message, or past the last one started), or null when that is not above what
 * was committed already.
 */
export function finishMessage(window: BatchWindow, offset: bigint): bigint | null {
  const index = window.unfinished.indexOf(offset);
  if (index >= 0) window.unfinished.splice(index, 1);
  const mark = window.unfinished[0] ?? window.next;
  return mark > window.committed ? mark : null;
}

/** Where the partition is read again from when the window is given up: its lowest unfinished message. */
export function rereadFrom(window: BatchWindow, offset: bigint): bigint {
  return window.unfinished[0] ?? offset;
}

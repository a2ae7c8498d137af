/**
 * One transcript request in the batcher's hands (transcript-batcher.ts), whichever way it travels:
 * its deadline and abort signal, its settling (once), and the plain unary GetTranscript call it
 * makes alone or as the fallback.
 */
import * as grpc from '@grpc/grpc-js';
import type { extractorV1 } from '@subx/contracts';
import { Errors } from '@subx/errors';
import type { AppError } from '@subx/errors';
import { fromItemFailure } from '@subx/service-kit';
import type { CallOptions } from './types.ts';

/**
 * Each item's deadline is the batcher's own timer, armed when the request is made, so a caller's
 * timer of the same length armed before it (withTimeout in fanout/direct.ts) wins the tie as it
 * does against a unary call. The calls themselves carry the deadline plus this grace, so grpc-js's
 * deadline timer (armed later, once sent) never fires first; the item's timer cancels the call
 * at the real deadline.
 */
const CALL_DEADLINE_GRACE_MS = 1_000;

export interface TranscriptCallOptions extends CallOptions {
  /** Absolute deadline; the earlier of it and deadlineMs (or the default) wins, as in unaryCall. */
  deadline?: Date;
}

export type TranscriptRequest = extractorV1.GetTranscriptRequest;
export type TranscriptResponse = extractorV1.GetTranscriptResponse;
export type UnaryTranscript = (
  request: TranscriptRequest,
  options: TranscriptCallOptions,
) => Promise<TranscriptResponse>;

/** What carries an item that has no answer yet (a lane): told when the item is settled otherwise. */
export interface Carrier {
  drop(item: Item): void;
}

export interface Item {
  request: TranscriptRequest;
  requestId: string | undefined;
  /** Epoch ms. */
  deadline: number;
  signal: AbortSignal | undefined;
  resolve(response: TranscriptResponse): void;
  reject(error: unknown): void;
  settled: boolean;
  timer: NodeJS.Timeout | undefined;
  onAbort: (() => void) | undefined;
  /** Cancels the item's unary call, once sent unary. */
  cancel: (() => void) | undefined;
  /** The lane carrying the item, once sent on one, and its number there. */
  lane: Carrier | undefined;
  number: number;
}

/** What unaryCall rejects with when the call's own deadline passes. */
function deadlineError(label: string): AppError {
  return fromItemFailure(
    { code: grpc.status.DEADLINE_EXCEEDED, message: 'Deadline exceeded', metadata: {} },
    label,
  );
}

/**
 * An item with its deadline timer and abort listener armed: settled by either as its unary call
 * would be rejected.
 */
export function createItem(
  request: TranscriptRequest,
  opts: TranscriptCallOptions,
  defaultDeadlineMs: number,
  label: string,
  resolve: (response: TranscriptResponse) => void,
  reject: (error: unknown) => void,
): Item {
  const signal = opts.signal;
  // One clock reading: the timer runs for exactly the requested time (CALL_DEADLINE_GRACE_MS).
  const now = Date.now();
  let timeoutMs = opts.deadlineMs ?? defaultDeadlineMs;
  if (opts.deadline) timeoutMs = Math.min(timeoutMs, opts.deadline.getTime() - now);
  const item: Item = {
    request,
    requestId: opts.requestId,
    deadline: now + timeoutMs,
    signal,
    resolve,
    reject,
    settled: false,
    timer: undefined,
    onAbort: undefined,
    cancel: undefined,
    lane: undefined,
    number: 0,
  };
  item.timer = setTimeout(() => settle(item, deadlineError(label)), Math.max(0, timeoutMs));
  item.timer.unref();
  if (signal) {
    item.onAbort = () => settle(item, Errors.internal(signal.reason));
    signal.addEventListener('abort', item.onAbort, { once: true });
  }
  return item;
}

/** Settles the item once: its answer or error, its timer and listener gone, its carrier told. */
export function settle(item: Item, error: unknown, response?: TranscriptResponse): void {
  if (item.settled) return;
  item.settled = true;
  clearTimeout(item.timer);
  if (item.onAbort) item.signal?.removeEventListener('abort', item.onAbort);
  item.cancel?.();
  if (error === undefined) item.resolve(response as TranscriptResponse);
  else item.reject(error);
  item.lane?.drop(item);
}

/** The item as a plain unary GetTranscript call (alone, or the fallback from a lane). */
export function sendUnary(item: Item, unary: UnaryTranscript): void {
  // The item's timer and abort listener stay armed: they settle the item and cancel the call.
  const controller = new AbortController();
  item.cancel = () => controller.abort();
  item.lane = undefined;
  unary(item.request, {
    deadlineMs: Math.max(0, item.deadline - Date.now()) + CALL_DEADLINE_GRACE_MS,
    ...(item.requestId === undefined ? {} : { requestId: item.requestId }),
    signal: controller.signal,
  }).then(
    (response) => settle(item, undefined, response),
    (error: unknown) => settle(item, error),
  );
}

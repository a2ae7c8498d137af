/**
 * Coalesces the extractor's GetTranscript calls made close together into batches, each one
 * message on a long-lived StreamTranscripts call (a lane, transcript-lanes.ts). grpc-js spends far
 * more CPU per call (a new HTTP/2 stream, headers, trailers, the interceptor and load-balancing
 * chain) than per message on an open stream (docs/benchmarks.md, "Transcript batching"); under
 * load, the uncached extract path spent most of its time there.
 *
 * The requests are gathered for a few event-loop turns while more keep coming (GATHER_MAX_TURNS,
 * GATHER_MAX_MS), not only the one turn they were made in: under load, requests arrive over
 * several turns, and larger calls cost less CPU per request. A request made alone waits one empty turn (microseconds) before it goes.
 *
 * Each request keeps the behaviour of its own unary call (transcript-item.ts): its own deadline
 * (an item whose deadline passes is rejected as a unary DEADLINE_EXCEEDED is), its own abort
 * signal, its request id, and its answer or error as soon as the extractor has it (completion
 * order). A gathering of a single request still makes a plain unary call. An extractor without
 * StreamTranscripts (an older version during a rolling upgrade) answers UNIMPLEMENTED: its items
 * go unary and batching pauses.
 */
import type { extractorV1 } from '@subx/contracts';
import { Errors } from '@subx/errors';
import type { Logger } from '@subx/ports';
import { createLanes } from './transcript-lanes.ts';
import {
  createItem,
  sendUnary,
  type Item,
  type TranscriptCallOptions,
  type TranscriptRequest,
  type TranscriptResponse,
  type UnaryTranscript,
} from './transcript-item.ts';

export type { TranscriptCallOptions } from './transcript-item.ts';

/**
 * Items per batch: the extractor's cap (MAX_TRANSCRIPTS_PER_CALL). The answers do not queue behind
 * each other: the extractor sends each as soon as it has it, those finished together grouped into
 * messages of up to about 1 MiB.
 */
const MAX_BATCH = 64;

/**
 * Gathering stops at the first turn that brought no new request, at MAX_BATCH items, after this
 * many turns, or once this much time has passed since the first request, whichever comes first:
 * the time bound keeps a slow, busy event loop (turns of several ms) from adding more than about
 * that to a request's latency. The bounds are set so that a loaded event loop (turns of half a
 * millisecond or more) still gathers most of a busy moment's requests into one call; larger
 * bounds gathered no more (docs/benchmarks.md, "Transcript batching"). A request that comes alone
 * still waits only its one empty turn.
 */
const GATHER_MAX_TURNS = 8;
const GATHER_MAX_MS = 4;

/** How long batching stays off after an extractor answered UNIMPLEMENTED (a rolling upgrade). */
const UNIMPLEMENTED_PAUSE_MS = 60_000;

export interface TranscriptBatcherOptions {
  /** The generated client (its channel) the lanes go through. */
  client: extractorV1.ExtractorServiceClient;
  /** The plain GetTranscript call: single requests, and the fallback. */
  unary: UnaryTranscript;
  defaultDeadlineMs: number;
  /** In error messages, as the unary client's label ('extractor'). */
  label: string;
  logger?: Logger;
  maxBatch?: number;
  pauseMs?: number;
  /** The gathering's bounds (GATHER_MAX_TURNS, GATHER_MAX_MS); tests pin them. */
  gather?: { maxTurns?: number; maxMs?: number };
  /** StreamTranscripts lanes (transcript-lanes.ts STREAM_LANES). */
  streamLanes?: number;
  /** How long a lane takes batches (transcript-lanes.ts STREAM_MAX_AGE_MS). */
  streamMaxAgeMs?: number;
}

export function createTranscriptBatcher(options: TranscriptBatcherOptions) {
  const { client, unary, label, logger } = options;
  const maxBatch = options.maxBatch ?? MAX_BATCH;
  const pauseMs = options.pauseMs ?? UNIMPLEMENTED_PAUSE_MS;
  const gatherMaxTurns = options.gather?.maxTurns ?? GATHER_MAX_TURNS;
  const gatherMaxMs = options.gather?.maxMs ?? GATHER_MAX_MS;
  let queue: Item[] = [];
  /** Until then every item goes unary: the extractor has no StreamTranscripts (or we closed). */
  let pausedUntil = 0;
  const lanes = createLanes({
    client,
    label,
    ...(options.streamLanes === undefined ? {} : { lanes: options.streamLanes }),
    ...(options.streamMaxAgeMs === undefined ? {} : { maxAgeMs: options.streamMaxAgeMs }),
    unimplemented(items) {
      pausedUntil = Date.now() + pauseMs;
      logger?.info(
        { rpc: 'StreamTranscripts', pause_ms: pauseMs },
        'the extractor has no StreamTranscripts (an older version?): unary calls for a while',
      );
      for (const item of items) sendUnary(item, unary);
    },
  });

  function flush(): void {
    const items = queue.filter((item) => !item.settled);
    queue = [];
    dispatch(items);
  }

  /** Items to send: alone as unary, else in even batches on the lanes (unary when none takes one). */
  function dispatch(items: Item[]): void {
    if (items.length === 1 || Date.now() < pausedUntil) {
      for (const item of items) sendUnary(item, unary);
      return;
    }
    // Split evenly: 33 items go as 17 + 16, not 32 + 1.
    const calls = Math.ceil(items.length / maxBatch);
    const size = Math.ceil(items.length / calls);
    for (let i = 0; i < items.length; i += size) {
      const chunk = items.slice(i, i + size);
      if (chunk.length > 1 && lanes.send(chunk)) continue;
      for (const item of chunk) sendUnary(item, unary);
    }
  }

  /** Flushes the queue once the requests stop coming (the bounds above), from `setImmediate`. */
  function gather(): void {
    const startedAt = performance.now();
    let seen = 0;
    let turns = 0;
    const look = () => {
      if (
        queue.length > seen &&
        queue.length < maxBatch &&
        turns < gatherMaxTurns &&
        performance.now() - startedAt < gatherMaxMs
      ) {
        seen = queue.length;
        turns += 1;
        setImmediate(look);
      } else flush();
    };
    setImmediate(look);
  }

  function getTranscript(
    request: TranscriptRequest,
    opts: TranscriptCallOptions = {},
  ): Promise<TranscriptResponse> {
    return new Promise<TranscriptResponse>((resolve, reject) => {
      if (opts.signal?.aborted) {
        reject(Errors.internal(opts.signal.reason));
        return;
      }
      queue.push(createItem(request, opts, options.defaultDeadlineMs, label, resolve, reject));
      if (queue.length === 1) gather();
    });
  }

  /**
   * Half-closes every lane (each ends once its items are answered), and sends no more batches on
   * lanes: before the channel is closed, so that an extractor shutting down gracefully is not
   * kept waiting by open calls.
   */
  function close(): void {
    pausedUntil = Infinity;
    lanes.close();
  }

  return Object.assign(getTranscript, { close });
}

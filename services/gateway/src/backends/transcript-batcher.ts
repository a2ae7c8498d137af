/**
 * Coalesces the extractor's GetTranscript calls made close together into one GetTranscripts call
 * (server streaming). grpc-js spends far more CPU per call (a new HTTP/2 stream, headers,
 * trailers, the interceptor and load-balancing chain) than per message on an open stream: about
 * 380 µs against 70–110 µs per round trip on the benchmark machine. Under load, the uncached
 * extract path spent most of its time there.
 *
 * The requests are gathered for a few event-loop turns while more keep coming (GATHER_MAX_TURNS,
 * GATHER_MAX_MS), not only the one turn they were made in: under load, requests arrive over
 * several turns: at 50 connections, calls of about 47 items instead of 18 cost about a fifth
 * less CPU per request. A request made alone waits one empty turn (microseconds) before it goes.
 *
 * Each request keeps the behaviour of its own unary call: its own deadline (an item whose deadline
 * passes is rejected as a unary DEADLINE_EXCEEDED is), its own abort signal, its request id, and
 * its answer or error as soon as the extractor has it (completion order). A gathering of a single
 * request still makes a plain unary call. An extractor without GetTranscripts (an older version
 * during a rolling upgrade) answers UNIMPLEMENTED: its items go unary and batching pauses.
 */
import * as grpc from '@grpc/grpc-js';
import { extractorV1 } from '@subx/contracts';
import { Errors } from '@subx/errors';
import type { AppError } from '@subx/errors';
import {
  REQUEST_ID_HEADER,
  fromGrpcError,
  fromItemFailure,
  grpcStatusName,
  observeGrpcCall,
} from '@subx/service-kit';
import type { Logger } from '@subx/service-kit';
import type { CallOptions } from './types.ts';

/**
 * Items per GetTranscripts call: the extractor's cap (MAX_TRANSCRIPTS_PER_CALL). The answers do not
 * queue behind each other: the extractor sends each as soon as it has it, those finished together
 * grouped into messages of up to about 1 MiB.
 */
const MAX_BATCH = 64;

/**
 * Gathering stops at the first turn that brought no new request, at MAX_BATCH items, after this
 * many turns, or once this much time has passed since the first request, whichever comes first:
 * the time bound keeps a slow, busy event loop (turns of several ms) from adding more than about
 * that to a request's latency. 4 ms, not 2: on a machine whose turns under load take half a
 * millisecond or more (npm start, 50 connections, the micro-cache off), 2 ms cut the gathering at
 * about 25 items a call; 4 ms gathers about 45, for −13% CPU per request and +19% requests/s
 * (switched every second under one load); 8 ms gathered no more. A request that comes
 * alone still waits only its one empty turn.
 */
const GATHER_MAX_TURNS = 8;
const GATHER_MAX_MS = 4;

/** How long batching stays off after an extractor answered UNIMPLEMENTED (a rolling upgrade). */
const UNIMPLEMENTED_PAUSE_MS = 60_000;

/**
 * Each item's deadline is the batcher's own timer, armed when the request is made, so a caller's
 * timer of the same length armed before it (withTimeout in fanout/direct.ts) wins the tie as it
 * does against a unary call. The calls themselves carry the deadline plus this grace, so grpc-js's
 * deadline timer (armed later, in the flush) never fires first; the item's timer cancels the call
 * at the real deadline.
 */
const CALL_DEADLINE_GRACE_MS = 1_000;

const PATH = extractorV1.ExtractorServiceService.getTranscripts.path;
const STREAM_PATH = extractorV1.ExtractorServiceService.streamTranscripts.path;

/**
 * Batches go on long-lived StreamTranscripts calls ("lanes"), not a GetTranscripts call each: a
 * message on an open call costs about half of what a new call does (grpc-js on loopback, batches
 * of 45 answers: 180–200 µs against 270–390 µs); on `npm start` with the micro-cache off, the main
 * thread's CPU per extract ×0.75 (switched every second under one load). Several lanes,
 * so that the answers of the batches in flight do not all wait on one HTTP/2 stream's
 * flow-control window, and each lane is half-closed after STREAM_MAX_AGE_MS (it ends once its
 * items are answered; the next batch opens a new one), so that a load-balancing policy spreads
 * the lanes over the extractors it knows, and an extractor shutting down (GOAWAY) is not kept
 * waiting by a lane for longer than that.
 */
const STREAM_LANES = 4;
const STREAM_MAX_AGE_MS = 2_000;
/** Below the extractor's cap (MAX_TRANSCRIPTS_IN_FLIGHT_PER_STREAM): over it, a batch call goes. */
const STREAM_MAX_IN_FLIGHT = 2_048;
/** Item numbers are uint32 on the wire: a lane is retired long before they would wrap. */
const STREAM_MAX_NUMBER = 0x7fff_ffff;

export interface TranscriptCallOptions extends CallOptions {
  /** Absolute deadline; the earlier of it and deadlineMs (or the default) wins, as in unaryCall. */
  deadline?: Date;
}

type Request = extractorV1.GetTranscriptRequest;
type Response = extractorV1.GetTranscriptResponse;
type Unary = (request: Request, options: TranscriptCallOptions) => Promise<Response>;

export interface TranscriptBatcherOptions {
  /** The generated client (its channel) the batch calls go through. */
  client: extractorV1.ExtractorServiceClient;
  /** The plain GetTranscript call: single requests, and the fallback. */
  unary: Unary;
  defaultDeadlineMs: number;
  /** In error messages, as the unary client's label ('extractor'). */
  label: string;
  logger?: Logger;
  maxBatch?: number;
  pauseMs?: number;
  /** The gathering's bounds (GATHER_MAX_TURNS, GATHER_MAX_MS); tests pin them. */
  gather?: { maxTurns?: number; maxMs?: number };
  /** StreamTranscripts lanes (STREAM_LANES); 0: a GetTranscripts call per batch. */
  streamLanes?: number;
  /** How long a lane takes batches (STREAM_MAX_AGE_MS). */
  streamMaxAgeMs?: number;
}

interface Item {
  request: Request;
  requestId: string | undefined;
  /** Epoch ms. */
  deadline: number;
  signal: AbortSignal | undefined;
  resolve(response: Response): void;
  reject(error: unknown): void;
  settled: boolean;
  timer: NodeJS.Timeout | undefined;
  onAbort: (() => void) | undefined;
  /** Cancels the item's unary call, once sent unary. */
  cancel: (() => void) | undefined;
  /** The GetTranscripts call carrying the item, once sent. */
  batch: Batch | undefined;
  /** The StreamTranscripts lane carrying the item, once sent, and its number there. */
  lane: Lane | undefined;
  number: number;
}

/** One StreamTranscripts call and the items it carries that have no answer yet. */
interface Lane {
  call: grpc.ClientDuplexStream<extractorV1.StreamTranscriptsRequest, extractorV1.StreamTranscriptsResponse>;
  /**
   * By number: the items sent on it and not settled yet. An item leaves it when its answer comes
   * (and settles it) or when it is settled otherwise (its deadline, its signal), so its size is how
   * many items still wait on the lane.
   */
  unanswered: Map<number, Item>;
  next: number;
  /** False once half-closed: no more batches, no more cancellations. */
  accepting: boolean;
  retireTimer: NodeJS.Timeout | undefined;
}

interface Batch {
  items: Item[];
  /** Items not settled yet. */
  open: number;
  /** Items the extractor has not answered yet (by index). */
  unanswered: Set<number>;
  call: grpc.ClientReadableStream<extractorV1.GetTranscriptsResponse> | undefined;
}

/** What unaryCall rejects with when the call's own deadline passes. */
function deadlineError(label: string): AppError {
  return fromItemFailure(
    { code: grpc.status.DEADLINE_EXCEEDED, message: 'Deadline exceeded', metadata: {} },
    label,
  );
}

type Answer = extractorV1.GetTranscriptsResponse | extractorV1.StreamTranscriptsResponse;

/** How a batch call or a lane ended: its status, its error (a failed call), whether it answered. */
interface CallEnd {
  status: grpc.StatusObject;
  failure: grpc.ServiceError | undefined;
  answered: boolean;
}

/**
 * Reads the answers of a GetTranscripts call or a lane: each answer (and those grouped in `more`)
 * to `take`, then `ended` once. A failed call emits 'error' (the status as a ServiceError, with its
 * trailers), then 'status'; 'end' comes once every message before it was delivered: both are
 * awaited, so that no answer still on its way is taken for a missing one.
 */
function readAnswers(
  call: grpc.ClientReadableStream<Answer>,
  take: (answer: Answer) => void,
  ended: (end: CallEnd) => void,
  onStatus?: () => void,
): void {
  let answered = false;
  let status: grpc.StatusObject | undefined;
  let failure: grpc.ServiceError | undefined;
  let done = false;
  let finished = false;
  const finish = () => {
    if (!status || !done || finished) return;
    finished = true;
    ended({ status, failure, answered });
  };
  call.on('data', (message: Answer) => {
    answered = true;
    take(message);
    for (const answer of message.more) take(answer);
  });
  call.on('error', (err: grpc.ServiceError) => {
    failure = err;
  });
  call.on('status', (s: grpc.StatusObject) => {
    status = s;
    onStatus?.();
    finish();
  });
  call.on('end', () => {
    done = true;
    finish();
  });
}

export function createTranscriptBatcher(options: TranscriptBatcherOptions) {
  const { client, unary, label, logger } = options;
  const maxBatch = options.maxBatch ?? MAX_BATCH;
  const pauseMs = options.pauseMs ?? UNIMPLEMENTED_PAUSE_MS;
  const gatherMaxTurns = options.gather?.maxTurns ?? GATHER_MAX_TURNS;
  const gatherMaxMs = options.gather?.maxMs ?? GATHER_MAX_MS;
  const lanesWanted = options.streamLanes ?? STREAM_LANES;
  const laneMaxAgeMs = options.streamMaxAgeMs ?? STREAM_MAX_AGE_MS;
  let queue: Item[] = [];
  let pausedUntil = 0;
  /** Until then batches go as GetTranscripts calls: the extractor has no StreamTranscripts. */
  let streamPausedUntil = lanesWanted > 0 ? 0 : Infinity;
  let lanes: Lane[] = [];
  let nextLane = 0;

  function detach(item: Item): void {
    clearTimeout(item.timer);
    if (item.onAbort) item.signal?.removeEventListener('abort', item.onAbort);
  }

  function settle(item: Item, error: unknown, response?: Response): void {
    if (item.settled) return;
    item.settled = true;
    detach(item);
    item.cancel?.();
    if (error === undefined) item.resolve(response as Response);
    else item.reject(error);
    const batch = item.batch;
    if (batch && --batch.open === 0 && batch.unanswered.size > 0) {
      // Nobody waits for what the extractor still works on (timed out or aborted): stop it. A
      // call whose items were all answered ends by itself (OK), without a cancellation.
      batch.call?.cancel();
    }
    const lane = item.lane;
    if (!lane?.unanswered.delete(item.number)) return;
    // Settled before its answer (timed out or aborted): the extractor may stop it.
    if (lane.accepting) {
      write(lane, { items: [], groupAnswers: false, firstIndex: 0, cancel: [item.number] });
    } else if (lane.unanswered.size === 0) {
      // Half-closed, and nobody waits for anything on it any more.
      lane.call.cancel();
    }
  }

  /**
   * A lane takes messages only while accepting (neither half-closed nor ended), so a write does
   * not fail; should one throw all the same, the lane is cancelled and its status settles its items.
   */
  function write(lane: Lane, message: extractorV1.StreamTranscriptsRequest): void {
    try {
      lane.call.write(message);
    } catch {
      stopAccepting(lane);
      lane.call.cancel();
    }
  }

  /** No more batches on the lane (it has ended, or is about to be half-closed). */
  function stopAccepting(lane: Lane): boolean {
    if (!lane.accepting) return false;
    lane.accepting = false;
    clearTimeout(lane.retireTimer);
    lanes = lanes.filter((l) => l !== lane);
    return true;
  }

  /** Half-closes the lane: the extractor ends it once it has answered its items. */
  function retire(lane: Lane): void {
    if (stopAccepting(lane)) lane.call.end();
  }

  function openLane(): Lane {
    const call = client.streamTranscripts(new grpc.Metadata());
    const lane: Lane = {
      call,
      unanswered: new Map(),
      next: 0,
      accepting: true,
      retireTimer: undefined,
    };
    lane.retireTimer = setTimeout(() => retire(lane), laneMaxAgeMs);
    lane.retireTimer.unref();
    const t0 = performance.now();
    const take = (answer: Answer) => {
      const item = lane.unanswered.get(answer.index);
      if (!item) return;
      lane.unanswered.delete(answer.index);
      settleAnswer(item, answer);
    };
    const ended = ({ status, failure, answered }: CallEnd) => {
      observeGrpcCall('client', STREAM_PATH, grpcStatusName(status.code), (performance.now() - t0) / 1000);
      const open = [...lane.unanswered.values()];
      lane.unanswered.clear();
      if (open.length === 0) return;
      if (status.code === grpc.status.UNIMPLEMENTED && !answered) {
        streamPausedUntil = Date.now() + pauseMs;
        logger?.info(
          { rpc: 'StreamTranscripts', pause_ms: pauseMs },
          'the extractor has no StreamTranscripts (an older version?): GetTranscripts calls for a while',
        );
        for (const item of open) item.lane = undefined;
        dispatch(open);
        return;
      }
      failOpen(open, failure, (item) => `StreamTranscripts ended without answering item ${item.number}`);
    };
    readAnswers(call, take, ended, () => stopAccepting(lane));
    return lane;
  }

  /** A lane that takes `count` more items, opened when there are fewer than wanted; else none. */
  function laneFor(count: number): Lane | undefined {
    if (lanes.length < lanesWanted) {
      let lane: Lane;
      try {
        lane = openLane();
      } catch {
        // e.g. the channel was closed: the batch goes as a GetTranscripts call, which reports it.
        return undefined;
      }
      lanes.push(lane);
      return lane;
    }
    for (let tries = 0; tries < lanes.length; tries++) {
      const lane = lanes[nextLane++ % lanes.length]!;
      if (lane.next + count > STREAM_MAX_NUMBER) {
        retire(lane);
        return laneFor(count);
      }
      if (lane.unanswered.size + count <= STREAM_MAX_IN_FLIGHT) return lane;
    }
    return undefined;
  }

  function sendOnLane(items: Item[]): boolean {
    const lane = laneFor(items.length);
    if (!lane) return false;
    const first = lane.next;
    lane.next += items.length;
    const now = Date.now();
    const message: extractorV1.StreamTranscriptsRequest = {
      items: items.map((item) => ({
        request: item.request,
        requestId: item.requestId ?? '',
        timeoutMs: Math.max(1, item.deadline - now),
      })),
      // Answers the extractor finishes together may come in one message (`more`).
      groupAnswers: true,
      firstIndex: first,
      cancel: [],
    };
    items.forEach((item, i) => {
      item.lane = lane;
      item.number = first + i;
      lane.unanswered.set(first + i, item);
    });
    write(lane, message);
    return true;
  }

  function sendUnary(item: Item): void {
    // The item's timer and abort listener stay armed: they settle the item and cancel the call.
    const controller = new AbortController();
    item.cancel = () => controller.abort();
    item.batch = undefined;
    unary(item.request, {
      deadlineMs: Math.max(0, item.deadline - Date.now()) + CALL_DEADLINE_GRACE_MS,
      ...(item.requestId === undefined ? {} : { requestId: item.requestId }),
      signal: controller.signal,
    }).then(
      (response) => settle(item, undefined, response),
      (error: unknown) => settle(item, error),
    );
  }

  function sendBatch(items: Item[]): void {
    const batch: Batch = {
      items,
      open: items.length,
      unanswered: new Set(items.keys()),
      call: undefined,
    };
    let deadline = 0;
    for (const item of items) {
      item.batch = batch;
      deadline = Math.max(deadline, item.deadline + CALL_DEADLINE_GRACE_MS);
    }
    const metadata = new grpc.Metadata();
    const firstId = items[0]?.requestId;
    if (firstId) metadata.set(REQUEST_ID_HEADER, firstId);
    const t0 = performance.now();
    let call: grpc.ClientReadableStream<extractorV1.GetTranscriptsResponse>;
    try {
      call = client.getTranscripts(
        {
          items: items.map((item) => ({ request: item.request, requestId: item.requestId ?? '' })),
          // Answers the extractor finishes together may come in one message (`more`).
          groupAnswers: true,
        },
        metadata,
        { deadline },
      );
    } catch (err) {
      // e.g. the channel was closed: what the unary call would reject with.
      for (const item of items) settle(item, fromGrpcError(err, label));
      return;
    }
    batch.call = call;

    const take = (answer: Answer) => {
      const item = items[answer.index];
      if (!item || !batch.unanswered.delete(answer.index)) return;
      settleAnswer(item, answer);
    };
    const ended = ({ status, failure, answered }: CallEnd) => {
      observeGrpcCall('client', PATH, grpcStatusName(status.code), (performance.now() - t0) / 1000);
      const open = items.filter((item) => !item.settled);
      if (open.length === 0) return;
      if (status.code === grpc.status.UNIMPLEMENTED && !answered) {
        pausedUntil = Date.now() + pauseMs;
        logger?.info(
          { rpc: 'GetTranscripts', pause_ms: pauseMs },
          'the extractor has no GetTranscripts (an older version?): unary calls for a while',
        );
        for (const item of open) sendUnary(item);
        return;
      }
      failOpen(open, failure, (item) => `GetTranscripts ended without answering item ${items.indexOf(item)}`);
    };
    readAnswers(call, take, ended);
  }

  /** The items a call left open: its failure as unary would report it, else INTERNAL_ERROR. */
  function failOpen(open: Item[], failure: grpc.ServiceError | undefined, missing: (item: Item) => string) {
    for (const item of open) {
      settle(item, failure ? fromGrpcError(failure, label) : Errors.internal(new Error(missing(item))));
    }
  }

  /** An answer (GetTranscripts or StreamTranscripts) settles its item. */
  function settleAnswer(item: Item, answer: Answer): void {
    const result = answer.result;
    if (result?.$case === 'transcript') settle(item, undefined, result.value);
    else if (result?.$case === 'error') settle(item, fromItemFailure(result.value, label));
    else settle(item, Errors.internal(new Error(`the extractor answered item ${answer.index} with nothing`)));
  }

  function flush(): void {
    const items = queue.filter((item) => !item.settled);
    queue = [];
    dispatch(items);
  }

  /** Items to send: alone as unary, else in even batches on a lane (or GetTranscripts calls). */
  function dispatch(items: Item[]): void {
    if (items.length === 1 || Date.now() < pausedUntil) {
      for (const item of items) sendUnary(item);
      return;
    }
    // Split evenly: 33 items go as 17 + 16, not 32 + 1.
    const calls = Math.ceil(items.length / maxBatch);
    const size = Math.ceil(items.length / calls);
    for (let i = 0; i < items.length; i += size) {
      const chunk = items.slice(i, i + size);
      if (chunk.length === 1) sendUnary(chunk[0] as Item);
      else if (Date.now() < streamPausedUntil || !sendOnLane(chunk)) sendBatch(chunk);
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

  function getTranscript(request: Request, opts: TranscriptCallOptions = {}): Promise<Response> {
    return new Promise<Response>((resolve, reject) => {
      const signal = opts.signal;
      if (signal?.aborted) {
        reject(Errors.internal(signal.reason));
        return;
      }
      // One clock reading: the timer runs for exactly the requested time (CALL_DEADLINE_GRACE_MS).
      const now = Date.now();
      let timeoutMs = opts.deadlineMs ?? options.defaultDeadlineMs;
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
        batch: undefined,
        lane: undefined,
        number: 0,
      };
      item.timer = setTimeout(() => settle(item, deadlineError(label)), Math.max(0, timeoutMs));
      item.timer.unref();
      if (signal) {
        item.onAbort = () => settle(item, Errors.internal(signal.reason));
        signal.addEventListener('abort', item.onAbort, { once: true });
      }
      queue.push(item);
      if (queue.length === 1) gather();
    });
  }

  /**
   * Half-closes every lane (each ends once its items are answered), and sends no more batches on
   * lanes: before the channel is closed, so that an extractor shutting down gracefully is not
   * kept waiting by open calls.
   */
  function close(): void {
    streamPausedUntil = Infinity;
    for (const lane of lanes) retire(lane);
  }

  return Object.assign(getTranscript, { close });
}

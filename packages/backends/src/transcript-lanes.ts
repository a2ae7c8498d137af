/**
 * The StreamTranscripts calls ("lanes") the transcript batcher (transcript-batcher.ts) sends its
 * batches on: a message on an open call costs grpc-js much less than a new call does
 * (docs/benchmarks.md, "Transcript batching").
 * Several lanes, so that the answers of the batches in flight do not all wait on one HTTP/2
 * stream's flow-control window, and each lane is half-closed after STREAM_MAX_AGE_MS (it ends once
 * its items are answered; the next batch opens a new one), so that a load-balancing policy spreads
 * the lanes over the extractors it knows, and an extractor shutting down (GOAWAY) is not kept
 * waiting by a lane for longer than that. An item settled before its answer (its deadline, its
 * signal) is cancelled on its lane, so the extractor stops it.
 */
import * as grpc from '@grpc/grpc-js';
import { extractorV1 } from '@subx/contracts';
import { Errors } from '@subx/errors';
import { fromGrpcError, fromItemFailure, grpcStatusName, observeGrpcCall } from '@subx/service-kit';
import { settle, type Carrier, type Item } from './transcript-item.ts';

const STREAM_LANES = 4;
const STREAM_MAX_AGE_MS = 2_000;
/** Below the extractor's cap (MAX_TRANSCRIPTS_IN_FLIGHT_PER_STREAM): over it, the items go unary. */
const STREAM_MAX_IN_FLIGHT = 2_048;
/** Item numbers are uint32 on the wire: a lane is retired long before they would wrap. */
const STREAM_MAX_NUMBER = 0x7fff_ffff;

const STREAM_PATH = extractorV1.ExtractorServiceService.streamTranscripts.path;

/** One StreamTranscripts call and the items it carries that have no answer yet. */
interface Lane extends Carrier {
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

export interface LanesOptions {
  client: extractorV1.ExtractorServiceClient;
  /** In error messages, as the unary client's label ('extractor'). */
  label: string;
  /** How many lanes (STREAM_LANES). */
  lanes?: number;
  /** How long a lane takes batches (STREAM_MAX_AGE_MS). */
  maxAgeMs?: number;
  /**
   * The extractor answered UNIMPLEMENTED before any answer (it has no StreamTranscripts): the
   * lane's items, none of them settled, for another way.
   */
  unimplemented(items: Item[]): void;
}

/** How a lane ended: its status, its error (a failed call), whether it answered anything. */
interface CallEnd {
  status: grpc.StatusObject;
  failure: grpc.ServiceError | undefined;
  answered: boolean;
}

/**
 * Reads a lane's answers: each answer (and those grouped in `more`) to `take`, then `ended` once. A
 * failed call emits 'error' (the status as a ServiceError, with its trailers), then 'status'; 'end'
 * comes once every message before it was delivered: both are awaited, so that no answer still on
 * its way is taken for a missing one.
 */
function readAnswers(
  call: grpc.ClientReadableStream<extractorV1.StreamTranscriptsResponse>,
  take: (answer: extractorV1.StreamTranscriptsResponse | extractorV1.GetTranscriptsResponse) => void,
  ended: (end: CallEnd) => void,
  onStatus: () => void,
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
  call.on('data', (message: extractorV1.StreamTranscriptsResponse) => {
    answered = true;
    take(message);
    for (const answer of message.more) take(answer);
  });
  call.on('error', (err: grpc.ServiceError) => {
    failure = err;
  });
  call.on('status', (s: grpc.StatusObject) => {
    status = s;
    onStatus();
    finish();
  });
  call.on('end', () => {
    done = true;
    finish();
  });
}

export function createLanes(options: LanesOptions) {
  const { client, label } = options;
  const lanesWanted = options.lanes ?? STREAM_LANES;
  const maxAgeMs = options.maxAgeMs ?? STREAM_MAX_AGE_MS;
  let lanes: Lane[] = [];
  let nextLane = 0;

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

  /** An answer settles its item. */
  function settleAnswer(item: Item, answer: extractorV1.StreamTranscriptsResponse): void {
    const result = answer.result;
    if (result?.$case === 'transcript') settle(item, undefined, result.value);
    else if (result?.$case === 'error') settle(item, fromItemFailure(result.value, label));
    else settle(item, Errors.internal(new Error(`the extractor answered item ${answer.index} with nothing`)));
  }

  function openLane(): Lane {
    const call = client.streamTranscripts(new grpc.Metadata());
    const lane: Lane = {
      call,
      unanswered: new Map(),
      next: 0,
      accepting: true,
      retireTimer: undefined,
      drop(item) {
        if (!lane.unanswered.delete(item.number)) return;
        // Settled before its answer (timed out or aborted): the extractor may stop it.
        if (lane.accepting) {
          write(lane, { items: [], groupAnswers: false, firstIndex: 0, cancel: [item.number] });
        } else if (lane.unanswered.size === 0) {
          // Half-closed, and nobody waits for anything on it any more.
          lane.call.cancel();
        }
      },
    };
    lane.retireTimer = setTimeout(() => retire(lane), maxAgeMs);
    lane.retireTimer.unref();
    const t0 = performance.now();
    const take = (answer: extractorV1.StreamTranscriptsResponse) => {
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
        for (const item of open) item.lane = undefined;
        options.unimplemented(open);
        return;
      }
      // The items left open: the call's failure as unary would report it, else INTERNAL_ERROR.
      for (const item of open) {
        settle(
          item,
          failure
            ? fromGrpcError(failure, label)
            : Errors.internal(new Error(`StreamTranscripts ended without answering item ${item.number}`)),
        );
      }
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
        // e.g. the channel was closed: the items go unary, which reports it.
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

  /** Sends the items as one batch on a lane; false when no lane takes them (they are not sent). */
  function send(items: Item[]): boolean {
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

  /** Half-closes every lane: each ends once its items are answered. */
  function close(): void {
    for (const lane of lanes) retire(lane);
  }

  return { send, close };
}

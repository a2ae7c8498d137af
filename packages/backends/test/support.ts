/**
 * What the transcript batcher's tests share: an extractor stand-in served by service-kit over real
 * grpc-js on loopback (GetTranscript and StreamTranscripts from the same per-item logic, as the
 * extractor does; not the deprecated GetTranscripts, which the gateway never calls), a record of
 * what it saw, and a harness wiring the batcher to it as grpc.ts does.
 */
import * as grpc from '@grpc/grpc-js';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import { commonV1, extractorV1 } from '@subx/contracts';
import { AppError, Errors } from '@subx/errors';
import {
  batchStreamHandler,
  createLogger,
  defineService,
  startGrpcServer,
  createGrpcClient,
  type CallContext,
  type ItemFailure,
  type PinoLogger,
  type StartedGrpcServer,
} from '@subx/service-kit';
import { createTranscriptBatcher } from '../src/index.ts';
import type { TranscriptCallOptions } from '../src/index.ts';

const logger = createLogger({ service: 'batcher-test', level: 'silent' });
export const EX = extractorV1.ExtractorServiceService;

/** What happened on the server side. */
export const seen = {
  unary: [] as string[],
  /** Each StreamTranscripts message with items. */
  batches: [] as { items: string[]; requestIds: string[]; metadataId: string | undefined }[],
  cancelled: [] as string[],
  /** Answer messages sent, and the answers each carried (1 + its `more`). */
  messages: [] as number[],
};

/**
 * How the stand-in groups answers (StreamTranscriptsRequest.group_answers), as the extractor does:
 * `off` answers each item alone (an extractor from before the field); `maxAnswers` per message.
 */
export const grouping = { off: false, maxAnswers: 64 };

export function transcript(videoId: string): extractorV1.GetTranscriptResponse {
  return {
    videoId,
    language: 'en',
    subtitleType: commonV1.SubtitleType.SUBTITLE_TYPE_MANUAL,
    segments: [{ text: `hello ${videoId}`, start: 0, duration: 1, words: [] }],
    metadata: undefined,
    cached: true,
    segmentsJson: '',
    segmentsJsonUtf8: Buffer.alloc(0),
    headJsonUtf8: Buffer.alloc(0),
    source: 'captions',
    audioSeconds: 0,
    fallbackReason: '',
    upstreamReason: '',
    fetchedAt: '2026-01-01T00:00:00.000Z',
  };
}

/** The per-item logic: the video id says what happens. */
export async function handle(req: extractorV1.GetTranscriptRequest, ctx: CallContext) {
  const id = req.videoId;
  if (id === 'notfound___') throw Errors.videoNotFound(id);
  if (id === 'nosubs_____') throw Errors.noSubtitles(id);
  if (id === 'blocked____')
    throw Errors.upstreamBlocked('http_429', 'The platform is refusing us.', undefined, 42);
  if (id === 'languages__') throw Errors.languageNotAvailable(id, 'de', ['en', 'fr']);
  if (id === 'boom_______') throw new Error('database password=hunter2');
  if (id.startsWith('slow')) await sleep(300);
  if (id.startsWith('hang')) {
    // Answers only when the call is cancelled (or its deadline passes), then as cancelled.
    await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
    seen.cancelled.push(id);
    throw Errors.internal(ctx.signal.reason);
  }
  return transcript(id);
}

const unimplemented = () => {
  throw Errors.internal(new Error('not used here'));
};

/** An item's answer, as the extractor builds it. */
const answers = {
  ok: (index: number, value: extractorV1.GetTranscriptResponse): extractorV1.GetTranscriptsResponse => ({
    index,
    result: { $case: 'transcript', value },
    more: [],
  }),
  failed: (index: number, value: ItemFailure): extractorV1.GetTranscriptsResponse => ({
    index,
    result: { $case: 'error', value },
    more: [],
  }),
};

export function registration() {
  return defineService(EX, {
    getTranscript: (req, ctx) => {
      seen.unary.push(req.videoId);
      return handle(req, ctx);
    },
    getTranscripts: unimplemented,
    streamTranscripts: (requests, ctx, send) =>
      batchStreamHandler({
        itemRpc: EX.getTranscript.path,
        maxItems: 64,
        maxInFlight: STREAM_MAX_IN_FLIGHT,
        defaultTimeoutMs: 300,
        serviceName: 'extractor',
        batch: (r: extractorV1.StreamTranscriptsRequest) => {
          if (r.items.length > 0) {
            seen.batches.push({
              items: r.items.map((i) => i.request?.videoId ?? ''),
              requestIds: r.items.map((i) => i.requestId),
              metadataId: ctx.metadata.get('x-request-id')[0]?.toString(),
            });
          }
          return {
            items: r.items.map((i) => ({
              request: i.request ?? extractorV1.GetTranscriptRequest.create(),
              requestId: i.requestId,
              timeoutMs: i.timeoutMs,
            })),
            firstIndex: r.firstIndex,
            cancel: r.cancel,
            groupAnswers: r.groupAnswers && !grouping.off,
          };
        },
        handle,
        ...answers,
        group: {
          join: (first, more) => ({ ...first, more }),
          weigh: () => 1,
          maxBytes: grouping.maxAnswers,
        },
      })(requests, ctx, (message) => {
        seen.messages.push(1 + message.more.length);
        send(message);
      }),
    validateVideo: unimplemented,
    getPlaylist: unimplemented,
    listPlaylistVideos: unimplemented,
    listChannelVideos: unimplemented,
    search: unimplemented,
    listSearchVideos: unimplemented,
  });
}

/** The stand-in's StreamTranscripts cap of items in flight on one call (the extractor's is 4096). */
export const STREAM_MAX_IN_FLIGHT = 80;

export const req = (videoId: string): extractorV1.GetTranscriptRequest =>
  extractorV1.GetTranscriptRequest.fromPartial({ videoId, language: 'en' });

/** Every field of an AppError a caller (and the HTTP error body) sees. */
export const shape = (err: unknown) => {
  expect(err).toBeInstanceOf(AppError);
  const e = err as AppError;
  return {
    code: e.code,
    message: e.message,
    status: e.status,
    grpcStatus: e.grpcStatus,
    reason: e.reason,
    details: e.details,
    retryAfterSeconds: e.retryAfterSeconds,
  };
};

export async function errorOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

export interface Harness {
  server: StartedGrpcServer;
  client: extractorV1.ExtractorServiceClient;
  /** As the gateway closes its backends: the batcher's lanes, then the channel. */
  close(): void;
  paths: string[];
  getTranscript: (r: extractorV1.GetTranscriptRequest, o?: TranscriptCallOptions) => Promise<unknown>;
  /** The plain unary call, without the batcher. */
  unary: (r: extractorV1.GetTranscriptRequest, o?: TranscriptCallOptions) => Promise<unknown>;
}

export async function harness(
  services = [registration()],
  extra: {
    maxBatch?: number;
    pauseMs?: number;
    gather?: { maxTurns?: number; maxMs?: number };
    streamLanes?: number;
    streamMaxAgeMs?: number;
    serverLogger?: PinoLogger;
  } = {},
): Promise<Harness> {
  const { serverLogger = logger, ...batcherOptions } = extra;
  const server = await startGrpcServer({ port: 0, host: '127.0.0.1', services, logger: serverLogger });
  const paths: string[] = [];
  // A real grpc-js interceptor records every call the client starts.
  const counting: grpc.Interceptor = (options, next) => {
    paths.push(options.method_definition.path);
    return new grpc.InterceptingCall(next(options));
  };
  // As grpc.ts wires it: service-kit's client (label, default deadline) and its raw client.
  const ex = createGrpcClient(extractorV1.ExtractorServiceClient, `127.0.0.1:${server.port}`, {
    defaultDeadlineMs: 2_000,
    label: 'extractor',
    // the constructor's options also take interceptors
    channelOptions: { interceptors: [counting] },
  });
  const client = ex.raw;
  const getTranscript = createTranscriptBatcher({
    client,
    unary: (r, o) => ex.getTranscript(r, o),
    defaultDeadlineMs: 2_000,
    label: 'extractor',
    logger,
    ...batcherOptions,
  });
  return {
    server,
    client,
    close: () => {
      getTranscript.close();
      client.close();
    },
    paths,
    getTranscript,
    unary: (r, o) => ex.getTranscript(r, o),
  };
}

const harnesses: Harness[] = [];
/** After each test: what the stand-in saw forgotten, the harnesses of startHarness stopped. */
export async function stopHarnesses(): Promise<void> {
  seen.unary.length = 0;
  seen.batches.length = 0;
  seen.cancelled.length = 0;
  seen.messages.length = 0;
  grouping.off = false;
  grouping.maxAnswers = 64;
  for (const h of harnesses.splice(0)) {
    h.close();
    await h.server.shutdown(500);
  }
}

/** A harness stopped after the test (stopHarnesses). */
export async function startHarness(...args: Parameters<typeof harness>): Promise<Harness> {
  const h = await harness(...args);
  harnesses.push(h);
  return h;
}

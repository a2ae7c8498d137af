import { extractorV1 } from '@subx/contracts';
import { batchHandler, batchStreamHandler, defineService } from '@subx/service-kit';
import type { ItemFailure, ServiceRegistration } from '@subx/service-kit';
import type { ExtractionService } from '../extraction-service.ts';
import type { ListingService } from '../listings/listing-service.ts';
import type { SearchService } from '../search/search-service.ts';
import { extractorServiceDefinition } from './answer-encoding.ts';

/**
 * Items per GetTranscripts call (the proto's 1..64). The gateway sends up to as many; the cap bounds
 * what one call may hold in flight (concurrent extractions and buffered answers).
 */
const MAX_TRANSCRIPTS_PER_CALL = 64;

/**
 * Items in flight on one StreamTranscripts call: what one gateway's call may hold at once (about
 * 64 batches); more are answered SERVICE_UNAVAILABLE. The gateway keeps below it.
 */
const MAX_TRANSCRIPTS_IN_FLIGHT_PER_STREAM = 4096;

/** A StreamTranscripts item without its own timeout: a unary call's default deadline. */
const DEFAULT_ITEM_TIMEOUT_MS = 5_000;

/**
 * Grouped answers per message (GetTranscriptsResponse.more), by answerWeight: well below the 4 MiB
 * a gRPC client accepts by default. A single larger answer still goes, alone.
 */
const MAX_GROUPED_ANSWER_BYTES = 1024 * 1024;

/** About the encoded size of one answer: its text, and a little per segment and for the rest. */
function answerWeight(answer: extractorV1.GetTranscriptsResponse): number {
  if (answer.result?.$case !== 'transcript') return 1024;
  const { segments, segmentsJson, segmentsJsonUtf8, headJsonUtf8, metadata } = answer.result.value;
  let text =
    segmentsJson.length +
    segmentsJsonUtf8.length +
    headJsonUtf8.length +
    (metadata?.description?.length ?? 0) +
    1024;
  for (const segment of segments) text += segment.text.length + 24;
  return 3 * text;
}

/**
 * One item's answer on GetTranscripts and on StreamTranscripts (the same fields and wire form),
 * and how answers done in the same turn (cache hits) go as one message.
 */
const itemAnswers = {
  ok: (index: number, transcript: extractorV1.GetTranscriptResponse): extractorV1.GetTranscriptsResponse => ({
    index,
    result: { $case: 'transcript', value: transcript },
    more: [],
  }),
  failed: (index: number, failure: ItemFailure): extractorV1.GetTranscriptsResponse => ({
    index,
    result: { $case: 'error', value: failure },
    more: [],
  }),
  group: {
    join: (first: extractorV1.GetTranscriptsResponse, more: extractorV1.GetTranscriptsResponse[]) => ({
      ...first,
      more,
    }),
    weigh: answerWeight,
    maxBytes: MAX_GROUPED_ANSWER_BYTES,
  },
};

/** gRPC ↔ use-case mapping for subx.extractor.v1.ExtractorService. */
export function extractorServiceRegistration(
  service: ExtractionService,
  listings: ListingService,
  search: SearchService,
): ServiceRegistration {
  return defineService(extractorServiceDefinition, {
    // The call's deadline and signal: model work starts only with the time to finish, and stops
    // when nobody waits for it any more.
    getTranscript: (req, ctx) => service.getTranscript(req, ctx),
    // Each item is a GetTranscript: identical concurrent items share the cache's single-flight.
    // Deprecated: kept only for gateways of the previous release, which fall back to it when
    // StreamTranscripts answers UNIMPLEMENTED; it goes in the next major version.
    getTranscripts: batchHandler({
      itemRpc: extractorV1.ExtractorServiceService.getTranscript.path,
      maxItems: MAX_TRANSCRIPTS_PER_CALL,
      items: (req: extractorV1.GetTranscriptsRequest) =>
        req.items.map((item) => ({
          request: item.request ?? extractorV1.GetTranscriptRequest.create(),
          requestId: item.requestId,
        })),
      handle: (req, ctx) => service.getTranscript(req, ctx),
      ok: itemAnswers.ok,
      failed: itemAnswers.failed,
      // for a gateway that reads `more`
      group: { wanted: (req) => req.groupAnswers, ...itemAnswers.group },
    }),
    // The gateway's batches on one long-lived call: GetTranscripts' items, numbered.
    streamTranscripts: batchStreamHandler({
      itemRpc: extractorV1.ExtractorServiceService.getTranscript.path,
      maxItems: MAX_TRANSCRIPTS_PER_CALL,
      maxInFlight: MAX_TRANSCRIPTS_IN_FLIGHT_PER_STREAM,
      defaultTimeoutMs: DEFAULT_ITEM_TIMEOUT_MS,
      serviceName: 'extractor',
      batch: (req: extractorV1.StreamTranscriptsRequest) => ({
        items: req.items.map((item) => ({
          request: item.request ?? extractorV1.GetTranscriptRequest.create(),
          requestId: item.requestId,
          timeoutMs: item.timeoutMs,
        })),
        firstIndex: req.firstIndex,
        cancel: req.cancel,
        groupAnswers: req.groupAnswers,
      }),
      handle: (req, ctx) => service.getTranscript(req, ctx),
      ok: itemAnswers.ok,
      failed: itemAnswers.failed,
      group: itemAnswers.group,
    }),
    validateVideo: (req) => service.validateVideo(req),
    getPlaylist: (req) => service.getPlaylist(req),
    // bulk-job listings stop at the caller's deadline or cancellation
    listPlaylistVideos: (req, ctx) => listings.listPlaylistVideos(req, ctx.signal),
    listChannelVideos: (req, ctx) => listings.listChannelVideos(req, ctx.signal),
    search: (req) => search.search(req),
    listSearchVideos: (req, ctx) => search.listSearchVideos(req, ctx.signal),
  });
}

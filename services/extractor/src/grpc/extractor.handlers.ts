import { extractorV1 } from '@subx/contracts';
import { batchHandler, defineService } from '@subx/service-kit';
import type { ServiceRegistration } from '@subx/service-kit';
import type { ExtractionService } from '../extraction-service.ts';
import type { ListingService } from '../listings/listing-service.ts';
import { extractorServiceDefinition } from './answer-encoding.ts';

/**
 * Items per GetTranscripts call (the proto's 1..64). The gateway sends at most 32; the cap bounds
 * what one call may hold in flight (concurrent extractions and buffered answers).
 */
const MAX_TRANSCRIPTS_PER_CALL = 64;

/** gRPC ↔ use-case mapping for subx.extractor.v1.ExtractorService. */
export function extractorServiceRegistration(
  service: ExtractionService,
  listings: ListingService,
): ServiceRegistration {
  return defineService(extractorServiceDefinition, {
    getTranscript: (req) => service.getTranscript(req),
    // Each item is a GetTranscript: identical concurrent items share the cache's single-flight.
    getTranscripts: batchHandler({
      itemRpc: extractorV1.ExtractorServiceService.getTranscript.path,
      maxItems: MAX_TRANSCRIPTS_PER_CALL,
      items: (req: extractorV1.GetTranscriptsRequest) =>
        req.items.map((item) => ({
          request: item.request ?? extractorV1.GetTranscriptRequest.create(),
          requestId: item.requestId,
        })),
      handle: (req) => service.getTranscript(req),
      ok: (index, transcript): extractorV1.GetTranscriptsResponse => ({
        index,
        result: { $case: 'transcript', value: transcript },
      }),
      failed: (index, failure): extractorV1.GetTranscriptsResponse => ({
        index,
        result: { $case: 'error', value: failure },
      }),
    }),
    validateVideo: (req) => service.validateVideo(req),
    getPlaylist: (req) => service.getPlaylist(req),
    // bulk-job listings (issue 23) stop at the caller's deadline or cancellation
    listPlaylistVideos: (req, ctx) => listings.listPlaylistVideos(req, ctx.signal),
    listChannelVideos: (req, ctx) => listings.listChannelVideos(req, ctx.signal),
  });
}

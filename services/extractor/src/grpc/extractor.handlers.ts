import { extractorV1 } from '@subx/contracts';
import { defineService } from '@subx/service-kit';
import type { ServiceRegistration } from '@subx/service-kit';
import type { ExtractionService } from '../extraction-service.ts';
import type { ListingService } from '../listings/listing-service.ts';

/** gRPC ↔ use-case mapping for subx.extractor.v1.ExtractorService. */
export function extractorServiceRegistration(
  service: ExtractionService,
  listings: ListingService,
): ServiceRegistration {
  return defineService(extractorV1.ExtractorServiceService, {
    getTranscript: (req) => service.getTranscript(req),
    validateVideo: (req) => service.validateVideo(req),
    getPlaylist: (req) => service.getPlaylist(req),
    // bulk-job listings (issue 23) stop at the caller's deadline or cancellation
    listPlaylistVideos: (req, ctx) => listings.listPlaylistVideos(req, ctx.signal),
    listChannelVideos: (req, ctx) => listings.listChannelVideos(req, ctx.signal),
  });
}

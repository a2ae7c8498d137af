import { extractorV1 } from '@subx/contracts';
import { defineService } from '@subx/service-kit';
import type { ServiceRegistration } from '@subx/service-kit';
import type { ExtractionService } from '../extraction-service.ts';

/** gRPC ↔ use-case mapping for subx.extractor.v1.ExtractorService. */
export function extractorServiceRegistration(service: ExtractionService): ServiceRegistration {
  return defineService(extractorV1.ExtractorServiceService, {
    getTranscript: (req) => service.getTranscript(req),
    validateVideo: (req) => service.validateVideo(req),
    getPlaylist: (req) => service.getPlaylist(req),
  });
}

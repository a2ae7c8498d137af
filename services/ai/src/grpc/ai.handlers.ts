import { aiV1 } from '@subx/contracts';
import { Errors } from '@subx/errors';
import { defineService } from '@subx/service-kit';
import type { ServiceRegistration } from '@subx/service-kit';
import type { AiService } from '../ai-service.ts';
import type { SummaryStyle } from '../domain/types.ts';

const STYLE_FROM_PROTO: Partial<Record<aiV1.SummaryStyle, SummaryStyle>> = {
  [aiV1.SummaryStyle.SUMMARY_STYLE_UNSPECIFIED]: 'brief',
  [aiV1.SummaryStyle.SUMMARY_STYLE_BRIEF]: 'brief',
  [aiV1.SummaryStyle.SUMMARY_STYLE_DETAILED]: 'detailed',
  [aiV1.SummaryStyle.SUMMARY_STYLE_KEY_POINTS]: 'key_points',
};

const VIDEO_ID = /^[A-Za-z0-9_-]{11}$/;

function requireVideoId(videoId: string): string {
  if (!VIDEO_ID.test(videoId)) throw Errors.invalidRequest('video_id must be an 11-character video id.');
  return videoId;
}

/** gRPC ↔ use-case mapping for subx.ai.v1.AiService. */
export function aiServiceRegistration(service: AiService): ServiceRegistration {
  return defineService(aiV1.AiServiceService, {
    summarize: (req) => {
      const style = STYLE_FROM_PROTO[req.style];
      if (!style) throw Errors.invalidRequest('style must be one of brief, detailed, key_points.');
      return service.summarize({
        videoId: requireVideoId(req.videoId),
        style,
        language: req.language,
        cachedOnly: req.cachedOnly,
      });
    },
    analyzeComments: (req) =>
      service.analyzeComments({
        videoId: requireVideoId(req.videoId),
        sampleSize: req.sampleSize,
        cachedOnly: req.cachedOnly,
        language: req.language,
      }),
  });
}

import type { extractorV1 } from '@subx/contracts';
import type { TranscriptModeName } from '../../schemas/common.ts';

/** The request's `mode` on the wire (captions as unspecified: what an older extractor reads). */
export const TRANSCRIPT_MODE: Record<TranscriptModeName, extractorV1.TranscriptMode> = {
  captions: 0,
  auto: 2,
  transcribe: 3,
};

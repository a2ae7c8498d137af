/**
 * Where a transcript may come from (`mode` on extract, batch, playlist, jobs and watches): a word
 * of the domain, below the HTTP schemas, the routes and the job runner that all name it.
 */
import type { extractorV1 } from '@subx/contracts';

export const TRANSCRIPT_MODES = ['captions', 'auto', 'transcribe'] as const;
export type TranscriptModeName = (typeof TRANSCRIPT_MODES)[number];

/** The request's `mode` on the wire (captions as unspecified: what an older extractor reads). */
export const TRANSCRIPT_MODE: Record<TranscriptModeName, extractorV1.TranscriptMode> = {
  captions: 0,
  auto: 2,
  transcribe: 3,
};

/** Whether a request may have a model transcribe or translate for it. */
export const mayStartModelWork = (options: { mode: TranscriptModeName; translate: boolean }): boolean =>
  options.mode !== 'captions' || options.translate;

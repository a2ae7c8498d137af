/**
 * Batch and playlist hand their videos to a FanOut. Today it calls the extractor over gRPC
 * (direct.ts); a Kafka implementation (jobs out, results back to the asking gateway) can
 * replace it without touching the routes.
 */
import type { AppError } from '@subx/errors';
import type { extractorV1 } from '@subx/contracts';

export interface FanOutJob {
  videoId: string;
  language: string;
  include: string[];
  translate: boolean;
  /** Where the transcript may come from; absent: captions only. */
  mode?: extractorV1.TranscriptMode;
  /** The longest audio the item may have transcribed (the account's tier); absent: the extractor's ceiling. */
  maxAudioSeconds?: number;
}

export interface FanOutRequest {
  requestId: string;
  jobs: FanOutJob[];
  /** Budget for the whole request; items not finished by then are TIMEOUT. */
  totalTimeoutMs: number;
  /** Budget for one video, counted from when its extraction starts. */
  itemTimeoutMs: number;
  /** Optional (additive): carried in the event envelope of each job by the Kafka fan-out. */
  accountId?: string;
  idempotencyKey?: string;
}

export type FanOutOutcome =
  { ok: true; transcript: extractorV1.GetTranscriptResponse } | { ok: false; error: AppError };

export interface FanOut {
  /** One outcome per job, in job order. Never rejects: failures are outcomes. */
  run(request: FanOutRequest): Promise<FanOutOutcome[]>;
}

/** docs/decisions.md "Deadlines of batch and playlist": max(total / n, floor) per video (the playlist rule; batch uses it with 60 s). */
export function perItemTimeoutMs(totalMs: number, items: number, floorMs: number): number {
  return Math.max(Math.floor(totalMs / Math.max(1, items)), floorMs);
}

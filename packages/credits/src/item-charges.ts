/**
 * What a batch, playlist or job item may cost (reserved before it runs) and what it did cost
 * (committed when it is delivered), by the rules extract follows for one video:
 *
 * - the item price (`perSuccessfulItem`), for every delivered item;
 * - a translation made by a model (`translated_by: "model"`, the platform refusing), when the
 *   request asked `translate` and the translation was made for it (a cached one costs nothing more);
 * - a transcription of the audio (`mode` auto or transcribe, `source: "audio"`): 1 credit per
 *   started minute of audio, reserved from the video's duration (at least one minute) and charged
 *   for the audio the model transcribed, never more than was reserved; a cached one costs nothing.
 *
 * A failed item costs nothing. Transcription needs the Pro tier, as on extract. A video whose
 * duration cannot be known reserves the tier's cap (never one minute for audio of any length), and
 * a transcript longer than the tier's cap is not delivered, whoever's cache it comes from.
 */
import type { extractorV1 } from '@subx/contracts';
import { AppError, Errors } from '@subx/errors';
import {
  itemsPrice,
  modelTranslationPrice,
  tierAllows,
  transcriptionPrice,
  type AccessPricing,
} from './pricing.ts';
import { MODEL_SPENT_CODES } from './model-budget.ts';
import type { Tier } from './types.ts';
import type { ExtractorBackend } from '@subx/backends';
import type { FanOutOutcome } from '@subx/fanout';
import type { TranscriptModeName } from '@subx/public-api';

/** A video's duration in seconds; 0 when it cannot be known (the item then reserves the tier's cap). */
export type DurationOf = (videoId: string) => Promise<number>;

/** Duration lookups in flight at once: a job of 10,000 URLs asks them a few at a time, not all. */
export const DURATION_LOOKUPS_IN_FLIGHT = 16;

export interface ItemCharges {
  /** Per item, in input order: the most it may cost (0 for an item that is not a video). */
  reserved: number[];
  /** The sum of `reserved`: what the request reserves up front. */
  total: number;
  /**
   * Per item, the seconds of audio the model may process for it (its duration, or the tier's cap
   * when unknown; 0 with mode captions): what it takes of the account's model budget.
   */
  audioSeconds: number[];
  /** What the delivered item at `index` costs. */
  spent(index: number, transcript: extractorV1.GetTranscriptResponse): number;
}

/**
 * 403 TIER_REQUIRED when `mode` asks for a transcription the tier does not include (below Pro, or
 * a tier the pricing table gives no audio); else the longest audio the tier may have transcribed,
 * in seconds (0 with mode captions: nothing is transcribed).
 */
export function checkTranscriptionTier(mode: TranscriptModeName, tier: Tier, pricing: AccessPricing): number {
  if (mode === 'captions') return 0;
  const cap = pricing.transcribeMaxSeconds[tier];
  if (!tierAllows(tier, 'pro') || cap <= 0) throw Errors.tierRequired('pro', tier);
  return cap;
}

/**
 * The tier's cap to send with a transcript request (GetTranscriptRequest.max_audio_seconds): 0
 * with mode captions or without an admitted key, where the extractor's ceiling is all there is.
 */
export function tierAudioCap(
  mode: TranscriptModeName,
  tier: Tier | undefined,
  pricing: AccessPricing,
): number {
  return mode === 'captions' || tier === undefined ? 0 : pricing.transcribeMaxSeconds[tier];
}

/** 422 AUDIO_TOO_LONG for a video longer than the tier transcribes. */
export function audioTooLongForTier(durationSeconds: number, cap: number, tier: Tier): AppError {
  return new AppError(
    'AUDIO_TOO_LONG',
    `The video is ${Math.round(durationSeconds)} s long; the ${tier} tier transcribes at most ${cap} s of audio.`,
    { details: { max_seconds: cap } },
  );
}

/**
 * The charges of items naming `videoIds` (null: not a video, free). With `mode` other than
 * captions, every distinct video's duration is asked once, at most DURATION_LOOKUPS_IN_FLIGHT at a
 * time (each call bounded by `durationOf`).
 */
export async function itemCharges(
  videoIds: readonly (string | null)[],
  options: {
    translate: boolean;
    mode: TranscriptModeName;
    /** The tier's cap on transcribed audio: what an item of unknown duration reserves. */
    capSeconds?: number;
  },
  pricing: AccessPricing,
  durationOf: DurationOf,
): Promise<ItemCharges> {
  const base = itemsPrice(1, pricing);
  const translation = options.translate ? modelTranslationPrice(pricing) : 0;
  const durations = new Map<string, number>();
  if (options.mode !== 'captions') {
    const distinct = [...new Set(videoIds.filter((id): id is string => id !== null))];
    let next = 0;
    const lookups = Math.min(DURATION_LOOKUPS_IN_FLIGHT, distinct.length);
    await Promise.all(
      Array.from({ length: lookups }, async () => {
        while (next < distinct.length) {
          const id = distinct[next++]!;
          durations.set(id, await durationOf(id).catch(() => 0));
        }
      }),
    );
  }
  const audioSeconds = videoIds.map((id) => {
    if (id === null || options.mode === 'captions') return 0;
    const duration = durations.get(id) ?? 0;
    return duration > 0 ? Math.ceil(duration) : (options.capSeconds ?? 0);
  });
  const transcription = audioSeconds.map((seconds, i) =>
    videoIds[i] === null || options.mode === 'captions'
      ? 0
      : Math.max(1, transcriptionPrice(seconds, pricing)),
  );
  const reserved = videoIds.map((id, i) => (id === null ? 0 : base + translation + transcription[i]!));
  return {
    reserved,
    total: reserved.reduce((sum, n) => sum + n, 0),
    audioSeconds,
    spent(index, t) {
      let cost = base;
      if (t.translatedFrom && t.translatedBy === 'model' && !t.cached) cost += translation;
      if (t.source === 'audio' && !t.cached)
        cost += Math.min(transcription[index] ?? 0, transcriptionPrice(t.audioSeconds, pricing));
      return Math.min(cost, reserved[index] ?? cost);
    },
  };
}

/**
 * 422 AUDIO_TOO_LONG for a transcript of more audio than `capSeconds` (the tier's cap, or the sync
 * cap of batch and playlist): checked on what the extractor answered, so that a transcript cached
 * for another tier is not served past this one's cap. Undefined when it may be delivered.
 */
export function overAudioCap(
  transcript: extractorV1.GetTranscriptResponse,
  capSeconds: number,
  tier?: Tier,
): AppError | undefined {
  if (transcript.source !== 'audio' || capSeconds <= 0 || transcript.audioSeconds <= capSeconds)
    return undefined;
  if (tier) return audioTooLongForTier(transcript.audioSeconds, capSeconds, tier);
  return new AppError(
    'AUDIO_TOO_LONG',
    `The video is ${Math.round(transcript.audioSeconds)} s long; this request transcribes at most ${capSeconds} s of audio.`,
    { details: { max_seconds: capSeconds } },
  );
}

/**
 * Durations from the extractor's validate call (its metadata cache), each bounded by `deadlineMs`;
 * a video it cannot answer for is 0 (that item most likely fails, and fails free).
 */
export function durationsFrom(
  extractor: Pick<ExtractorBackend, 'validateVideo'>,
  requestId: string,
  deadlineMs: number,
): DurationOf {
  return (videoId) =>
    extractor.validateVideo({ videoId }, { requestId, deadlineMs }).then(
      (video) => video.duration,
      () => 0,
    );
}

/**
 * The seconds of audio the model processed for one item: a transcription made for it (not from a
 * cache), or a failure it spent its time on (the seconds the item took of the budget).
 */
export function modelSecondsOf(outcome: FanOutOutcome | undefined, taken: number): number {
  if (!outcome) return 0;
  if (outcome.ok)
    return outcome.transcript.source === 'audio' && !outcome.transcript.cached
      ? outcome.transcript.audioSeconds
      : 0;
  return MODEL_SPENT_CODES.has(outcome.error.code) ? taken : 0;
}

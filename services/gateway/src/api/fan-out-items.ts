import type { FastifyRequest } from 'fastify';
import { toPublicErrorBody } from '@subx/errors';
import type { OutputFormat } from '@subx/formats';
import type { Clock } from '@subx/ports';
import { rateLimitBody } from '../access/rate-limit.ts';
import type { Reservation } from '@subx/credits';
import { admissionOf } from '../http/reservation.ts';
import type { FanOut, FanOutJob } from '@subx/fanout';
import { failureItem, successItem } from '@subx/public-api';
import { modelSecondsOf, overAudioCap, type ItemCharges } from '@subx/credits';
import type { Tier } from '@subx/credits';
import type { IncludeField, TranscriptModeName } from '@subx/public-api';
import { TRANSCRIPT_MODE } from '@subx/public-api';
import { invalidVideoUrlMessage } from '@subx/public-api';

export interface ItemInput {
  url: string;
  /** null: the URL was not an accepted video URL (the item fails with INVALID_URL). */
  videoId: string | null;
}

export interface ItemsResult {
  results: Record<string, unknown>[];
  successful: number;
  failed: number;
  /** What the delivered items cost (item-charges.ts). */
  credits: number;
  /** Seconds of audio the model processed for the items (@subx/credits, model-budget.ts). */
  modelSeconds: number;
}

/**
 * Runs the resolvable items through the fan-out and assembles one result per input, in input
 * order. Per-item messages go through toPublicErrorBody, so internal failures never leak.
 */
export async function extractItems(
  fanOut: FanOut,
  request: FastifyRequest,
  items: ItemInput[],
  options: {
    language: string;
    include: IncludeField[];
    translate: boolean;
    mode: TranscriptModeName;
    /**
     * The longest audio an item may have transcribed: the account's tier cap (pricing
     * `transcribeMaxSeconds`) under TRANSCRIBE_SYNC_MAX_SECONDS; a longer transcript, from any
     * cache, is not delivered (AUDIO_TOO_LONG).
     */
    maxAudioSeconds: number;
    tier: Tier;
    format: OutputFormat;
    includeTimestamps: boolean;
    totalTimeoutMs: number;
    itemTimeoutMs: number;
    /** The items' prices (aligned with `items`). */
    charges: ItemCharges;
  },
): Promise<ItemsResult> {
  const jobs: FanOutJob[] = [];
  const jobIndex: number[] = [];
  items.forEach((item, i) => {
    if (item.videoId === null) return;
    jobIndex[i] = jobs.length;
    jobs.push({
      videoId: item.videoId,
      language: options.language,
      include: options.include,
      translate: options.translate,
      mode: TRANSCRIPT_MODE[options.mode],
      maxAudioSeconds: options.maxAudioSeconds,
    });
  });
  const outcomes =
    jobs.length === 0
      ? []
      : await fanOut.run({
          requestId: request.id,
          jobs,
          totalTimeoutMs: options.totalTimeoutMs,
          itemTimeoutMs: options.itemTimeoutMs,
          ...(request.admission ? { accountId: request.admission.account.id } : {}),
          ...(request.idempotencyKey ? { idempotencyKey: request.idempotencyKey } : {}),
        });
  let successful = 0;
  let credits = 0;
  let modelSeconds = 0;
  const results = items.map((item, i) => {
    if (item.videoId === null) {
      return failureItem(item.url, null, 'INVALID_URL', invalidVideoUrlMessage(item.url));
    }
    let outcome = outcomes[jobIndex[i]!];
    modelSeconds += modelSecondsOf(outcome, options.charges.audioSeconds[i] ?? 0);
    const overCap = outcome?.ok
      ? overAudioCap(outcome.transcript, options.maxAudioSeconds, options.tier)
      : undefined;
    if (overCap) outcome = { ok: false, error: overCap };
    if (outcome?.ok) {
      successful += 1;
      const cost = options.charges.spent(i, outcome.transcript);
      credits += cost;
      return successItem(item.url, outcome.transcript, {
        format: options.format,
        includeTimestamps: options.includeTimestamps,
        include: options.include,
        creditsUsed: cost,
      });
    }
    if (outcome && outcome.error.status >= 500 && outcome.error.code !== 'TIMEOUT') {
      request.log.warn({ err: outcome.error, video_id: item.videoId }, 'batch item failed');
    }
    const body = toPublicErrorBody(outcome?.error, request.id).error;
    return failureItem(item.url, item.videoId, body.code, body.message);
  });
  return { results, successful, failed: items.length - successful, credits, modelSeconds };
}

/**
 * Charges what was delivered only (failures are free), then returns the body fields batch and playlist
 * share, in the order the interface lists them.
 */
export async function settleItems(
  request: FastifyRequest,
  reservation: Reservation,
  outcome: ItemsResult,
  attempted: number,
  deps: { clock: Clock },
) {
  const charged = outcome.credits;
  await reservation.commit(charged, { successfulItems: outcome.successful, attemptedItems: attempted });
  return {
    results: outcome.results,
    credits_charged: charged,
    credits_details: { successful: outcome.successful, failed: outcome.failed, total_attempted: attempted },
    rate_limit: rateLimitBody(admissionOf(request).rateLimit),
    extracted_at: new Date(deps.clock.now()).toISOString(),
    request_id: request.id,
  };
}

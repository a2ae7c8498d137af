/**
 * The one configuration table for tiers, limits and prices (decisions.md: "All limits and prices
 * live in one configuration table, not scattered literals"). Every number the access module uses
 * comes from an `AccessPricing` value; `DEFAULT_PRICING` holds the documented defaults.
 */
import { TIERS } from './types.ts';
import type { Operation, Tier } from './types.ts';

export interface AccessPricing {
  /** Requests per UTC day; null = unlimited. */
  dailyLimit: Record<Tier, number | null>;
  /** Credits granted at the start of each UTC month. */
  monthlyAllowance: Record<Tier, number>;
  /** Most items one bulk job may hold (POST /api/v1/jobs); 0: the tier has no jobs. */
  jobMaxItems: Record<Tier, number>;
  /** Jobs one account may have waiting to start (queued); one more is refused with 429. */
  jobMaxQueued: Record<Tier, number>;
  /** Watches one account may keep (POST /api/v1/watches); 0: the tier has none. */
  watchMax: Record<Tier, number>;
  /**
   * The longest video whose audio the tier may have transcribed (`mode` auto or transcribe), in
   * seconds; longer: 422 AUDIO_TOO_LONG before anything is fetched or charged. Under the
   * extractor's own ceiling (TRANSCRIBE_MAX_SECONDS); extract also stops at TRANSCRIBE_SYNC_MAX_SECONDS.
   */
  transcribeMaxSeconds: Record<Tier, number>;
  /**
   * Seconds of audio the model may process for one account per UTC day (access/model-budget.ts):
   * every transcription the account starts takes its audio's length, failures included; a tier
   * without a budget left is refused with 429 RATE_LIMITED (reason model_budget). Every tier has one.
   */
  modelSecondsPerDay: Record<Tier, number>;
  /** Lowest tier allowed to call the operation. */
  minimumTier: Record<Operation, Tier>;
  prices: {
    extract: number;
    /**
     * Added to an extract translated by a model (`translated_by: "model"`, the platform refusing),
     * when the translation is made for this request; an answer from a cache costs what an extract does.
     */
    modelTranslation: number;
    /** Per successful item (batch and playlist); failures are free. */
    perSuccessfulItem: number;
    /** [maxDurationSeconds, credits] steps, ascending; the last step applies to anything longer. */
    summarize: { upToSeconds: number | null; credits: number }[];
    /** Credits per started block of this many returned comments. */
    commentsPerCredits: number;
    commentsAnalyze: number;
    /** A transcription of a video's audio (`mode`): credits per started minute of audio. */
    transcriptionPerMinute: number;
    /** Extract with `embed`: credits per started block of this many embedded chunks. */
    embeddedChunksPerCredit: number;
    /** A page of search results not served from the cache (a metadata read: 0 by default). */
    search: number;
  };
}

export const DEFAULT_PRICING: AccessPricing = {
  dailyLimit: { free: 100, pro: 10_000, business: 50_000, enterprise: null },
  monthlyAllowance: { free: 50, pro: 5_000, business: 25_000, enterprise: 100_000 },
  jobMaxItems: { free: 0, pro: 1_000, business: 5_000, enterprise: 10_000 },
  jobMaxQueued: { free: 0, pro: 20, business: 100, enterprise: 500 },
  watchMax: { free: 0, pro: 10, business: 50, enterprise: 200 },
  // Free has no transcription (the Pro tier and above, minimumTier aside: `mode` is not an operation).
  transcribeMaxSeconds: { free: 0, pro: 3_600, business: 10_800, enterprise: 14_400 },
  // Four hours of audio a day for Pro, a day's worth for Enterprise: bounded for every tier.
  modelSecondsPerDay: { free: 0, pro: 14_400, business: 43_200, enterprise: 86_400 },
  minimumTier: {
    extract: 'free',
    batch: 'free',
    playlist: 'free',
    summarize: 'pro',
    comments: 'pro',
    comments_analyze: 'pro',
    // Bulk jobs (POST /api/v1/jobs): the free tier gets the tier error summarize gives.
    jobs: 'pro',
    search: 'free',
  },
  prices: {
    extract: 0,
    modelTranslation: 2,
    perSuccessfulItem: 1,
    summarize: [
      { upToSeconds: 600, credits: 2 },
      { upToSeconds: 1800, credits: 4 },
      { upToSeconds: null, credits: 6 },
    ],
    commentsPerCredits: 500,
    commentsAnalyze: 3,
    transcriptionPerMinute: 1,
    embeddedChunksPerCredit: 100,
    search: 0,
  },
};

function tierRank(tier: Tier): number {
  return TIERS.indexOf(tier);
}

/** True when `tier` is `required` or higher (free < pro < business < enterprise). */
export function tierAllows(tier: Tier, required: Tier): boolean {
  return tierRank(tier) >= tierRank(required);
}

export function extractPrice(pricing: AccessPricing = DEFAULT_PRICING): number {
  return pricing.prices.extract;
}

/** What a model translation adds to an extract (a platform translation adds nothing). */
export function modelTranslationPrice(pricing: AccessPricing = DEFAULT_PRICING): number {
  return pricing.prices.modelTranslation;
}

/** Batch and playlist: per successful item. Also the worst case to reserve when given the item count. */
export function itemsPrice(successfulItems: number, pricing: AccessPricing = DEFAULT_PRICING): number {
  return Math.max(0, Math.floor(successfulItems)) * pricing.prices.perSuccessfulItem;
}

export function summarizePrice(durationSeconds: number, pricing: AccessPricing = DEFAULT_PRICING): number {
  for (const step of pricing.prices.summarize) {
    if (step.upToSeconds === null || durationSeconds <= step.upToSeconds) return step.credits;
  }
  // A table without an open-ended last step: the most expensive step applies.
  return pricing.prices.summarize.at(-1)?.credits ?? 0;
}

/** Worst case a summarize request may cost (what the gateway reserves before the duration is known). */
export function summarizeMaxPrice(pricing: AccessPricing = DEFAULT_PRICING): number {
  return Math.max(0, ...pricing.prices.summarize.map((s) => s.credits));
}

/** ceil(returned / 500); 0 when served from cache or when comments are disabled (returned = 0). */
export function commentsPrice(
  returned: number,
  options: { cached?: boolean; disabled?: boolean } = {},
  pricing: AccessPricing = DEFAULT_PRICING,
): number {
  if (options.cached || options.disabled || returned <= 0) return 0;
  return Math.ceil(returned / pricing.prices.commentsPerCredits);
}

export function commentsAnalyzePrice(
  options: { cached?: boolean } = {},
  pricing: AccessPricing = DEFAULT_PRICING,
): number {
  return options.cached ? 0 : pricing.prices.commentsAnalyze;
}

/** Extract with `embed: true`: 1 per started block of `embeddedChunksPerCredit` chunks (0 chunks: 0). */
export function embeddingsPrice(chunks: number, pricing: AccessPricing = DEFAULT_PRICING): number {
  return chunks <= 0 ? 0 : Math.ceil(chunks / pricing.prices.embeddedChunksPerCredit);
}

/** A transcription: `transcriptionPerMinute` per started minute of audio (70 s = 2). */
export function transcriptionPrice(seconds: number, pricing: AccessPricing = DEFAULT_PRICING): number {
  return seconds <= 0 ? 0 : Math.ceil(seconds / 60) * pricing.prices.transcriptionPerMinute;
}

/** A page of search results: `prices.search`; 0 when served from the cache. */
export function searchPrice(
  options: { cached?: boolean } = {},
  pricing: AccessPricing = DEFAULT_PRICING,
): number {
  return options.cached ? 0 : pricing.prices.search;
}

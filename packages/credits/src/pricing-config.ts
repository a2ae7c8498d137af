/**
 * ACCESS_PRICING_JSON: the schema of the override merged over DEFAULT_PRICING. Every key is
 * optional (a limit change is one field) and unknown keys are refused, so a misspelt
 * `dailyLimits` fails the start instead of silently changing nothing.
 */
import { z } from 'zod';
import type { AccessPricing } from './pricing.ts';
import { DEFAULT_PRICING } from './pricing.ts';
import { TIERS } from './types.ts';

const credits = z.number().int().nonnegative();
const tier = z.enum(TIERS);

function perTier<T extends z.ZodType>(value: T) {
  return z.strictObject(
    Object.fromEntries(TIERS.map((t) => [t, value.optional()])) as Record<
      (typeof TIERS)[number],
      z.ZodOptional<T>
    >,
  );
}

const operations = Object.keys(DEFAULT_PRICING.minimumTier) as (keyof AccessPricing['minimumTier'])[];

export const PricingOverrideSchema = z.strictObject({
  /** Requests per UTC day; null = unlimited. */
  dailyLimit: perTier(z.number().int().positive().nullable()).optional(),
  monthlyAllowance: perTier(credits).optional(),
  /** Items per bulk job; the hard ceiling is 10,000 (the listing RPCs' bound). */
  jobMaxItems: perTier(z.number().int().min(0).max(10_000)).optional(),
  /** Jobs waiting to start per account. */
  jobMaxQueued: perTier(z.number().int().min(0).max(100_000)).optional(),
  /** Watches per account. */
  watchMax: perTier(z.number().int().min(0).max(10_000)).optional(),
  /** Seconds of audio one transcription may have, per tier (at most a day). */
  transcribeMaxSeconds: perTier(z.number().int().min(0).max(86_400)).optional(),
  /**
   * Seconds of audio the model may process for one account per UTC day, per tier: a number for
   * every tier (no tier is unlimited), at most 30 days of audio.
   */
  modelSecondsPerDay: perTier(z.number().int().min(0).max(2_592_000)).optional(),
  minimumTier: z
    .strictObject(
      Object.fromEntries(operations.map((op) => [op, tier.optional()])) as Record<
        (typeof operations)[number],
        z.ZodOptional<typeof tier>
      >,
    )
    .optional(),
  prices: z
    .strictObject({
      extract: credits.optional(),
      perSuccessfulItem: credits.optional(),
      summarize: z
        .array(z.strictObject({ upToSeconds: z.number().int().positive().nullable(), credits }))
        .min(1)
        .superRefine((steps, ctx) => {
          // Steps are read in order and the first that fits applies: out of order, a long video
          // would be charged a short one's price.
          for (let i = 1; i < steps.length; i++) {
            const before = steps[i - 1]?.upToSeconds;
            const here = steps[i]?.upToSeconds;
            if (
              before === null ||
              (here !== null && here !== undefined && before !== undefined && here <= before)
            ) {
              ctx.addIssue({
                code: 'custom',
                path: [i, 'upToSeconds'],
                message: 'must be ascending, with null (open-ended) only last',
              });
            }
          }
        })
        .optional(),
      commentsPerCredits: z.number().int().positive().optional(),
      commentsAnalyze: credits.optional(),
      embeddedChunksPerCredit: z.number().int().positive().optional(),
      transcriptionPerMinute: credits.optional(),
      search: credits.optional(),
    })
    .optional(),
});

export type PricingOverride = z.output<typeof PricingOverrideSchema>;

/**
 * The price table in force: ACCESS_PRICING_JSON over the defaults. The gateway and the job service
 * both read it so, since they charge the same accounts.
 */
export function pricingFrom(override: PricingOverride | undefined): AccessPricing {
  return override ? mergePricing(DEFAULT_PRICING, override) : DEFAULT_PRICING;
}

/** `override` merged over `base` key by key; arrays (the summarize steps) are replaced whole. */
export function mergePricing(base: AccessPricing, override: PricingOverride): AccessPricing {
  return deepMerge(base, override);
}

function deepMerge<T>(base: T, override: unknown): T {
  if (override === undefined) return base;
  if (typeof override !== 'object' || override === null || Array.isArray(override)) return override as T;
  if (typeof base !== 'object' || base === null || Array.isArray(base)) return override as T;
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [k, v] of Object.entries(override)) out[k] = deepMerge(out[k], v);
  return out as T;
}

/**
 * Seconds of audio the model may process for one account per UTC day (pricing
 * `modelSecondsPerDay`, a number for every tier: no tier is unlimited). Credits pay for what is
 * delivered; this bounds what the operator's model may spend on an account whatever is delivered:
 * failures the model spent time on (no speech, a timeout, an answer cut short) count too.
 *
 * A request that may start model work takes its audio's length (the video's duration, or the
 * tier's cap when the duration is unknown) before anything starts, and gives back what the model
 * did not process (an answer from a cache, captions after all, a failure before the model). The
 * counter lives in the shared key-value store (every replica sees the same day), keyed by account
 * and UTC day, and expires a day after the day ends.
 */
import { AppError } from '@subx/errors';
import type { Clock, KeyValueStore } from '@subx/ports';
import type { AccessPricing } from './pricing.ts';
import type { Tier } from './types.ts';
import { DAY_MS, nextUtcMidnight, utcDate } from './time.ts';

export interface ModelBudget {
  /**
   * Takes `seconds` of the account's day: 429 RATE_LIMITED (reason model_budget, Retry-After at
   * the next UTC midnight) when that would pass its tier's budget (0 seconds: when it is used up);
   * nothing is taken then.
   */
  take(account: { id: string; tier: Tier }, seconds: number): Promise<void>;
  /** Settles what was taken (`taken`) against what the model processed (`spent`): gives back or adds the difference. */
  settle(accountId: string, taken: number, spent: number): Promise<void>;
  /** The day's budget and what is used of it. */
  today(account: { id: string; tier: Tier }): Promise<{ perDay: number; used: number; resetsAt: number }>;
}

/** Failures the model spent its time on: what they took stays taken. */
export const MODEL_SPENT_CODES: ReadonlySet<string> = new Set(['TRANSCRIPTION_FAILED', 'NO_SPEECH']);

export function createModelBudget(deps: {
  kv: KeyValueStore;
  clock: Clock;
  pricing: AccessPricing;
}): ModelBudget {
  const { kv, clock, pricing } = deps;
  const keyOf = (accountId: string, now: number) => `model-seconds:${accountId}:${utcDate(now)}`;
  const expiry = (now: number) => nextUtcMidnight(now) + DAY_MS;

  return {
    async take(account, seconds) {
      const amount = Math.max(0, Math.ceil(seconds));
      const now = clock.now();
      const perDay = pricing.modelSecondsPerDay[account.tier];
      const key = keyOf(account.id, now);
      // Nothing to take: refused only when the day's budget is used up already.
      const used =
        amount === 0
          ? Number((await kv.get(key)) ?? 0) || 0
          : await kv.increment(key, amount, { expireAtMs: expiry(now) });
      if (amount === 0 ? used < perDay : used <= perDay) return;
      if (amount > 0) await kv.increment(key, -amount, { expireAtMs: expiry(now) });
      const retryAfterSeconds = Math.max(1, Math.ceil((nextUtcMidnight(now) - now) / 1000));
      throw new AppError(
        'RATE_LIMITED',
        `This request may have the model process ${amount} s of audio; the ${account.tier} tier's model budget is ${perDay} s a day and ${Math.max(0, used - amount)} s of it are used. It resets at 00:00 UTC.`,
        { reason: 'model_budget', retryAfterSeconds, details: { model_seconds_per_day: perDay } },
      );
    },
    async settle(accountId, taken, spent) {
      const difference = Math.ceil(spent) - Math.ceil(taken);
      if (difference === 0) return;
      const now = clock.now();
      await kv.increment(keyOf(accountId, now), difference, { expireAtMs: expiry(now) });
    },
    async today(account) {
      const now = clock.now();
      const raw = await kv.get(keyOf(account.id, now));
      return {
        perDay: pricing.modelSecondsPerDay[account.tier],
        used: Math.max(0, Number(raw ?? 0) || 0),
        resetsAt: nextUtcMidnight(now),
      };
    },
  };
}

/**
 * Runs `work` with `seconds` taken of the account's model budget, then settles what was taken
 * against what the model processed: `spent(result)` when it answers; when it fails, everything
 * taken if the model spent its time on the failure, else nothing. `seconds` 0: a request that may
 * still have audio transcribed (`mode` auto on a video with captions) takes nothing up front, is
 * refused only when the day's budget is used up, and counts what it did spend; `null`: it cannot
 * start model work, and the budget is not consulted.
 */
export async function withModelBudget<T>(
  budget: ModelBudget,
  account: { id: string; tier: Tier },
  seconds: number | null,
  work: () => Promise<T>,
  spent: (result: T) => number,
): Promise<T> {
  if (seconds === null) return work();
  const taken = Math.ceil(seconds);
  await budget.take(account, taken);
  let result: T;
  try {
    result = await work();
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    await budget.settle(
      account.id,
      taken,
      typeof code === 'string' && MODEL_SPENT_CODES.has(code) ? taken : 0,
    );
    throw error;
  }
  await budget.settle(account.id, taken, spent(result));
  return result;
}

/**
 * What items take of the model budget up front: with `transcribe` their audio's length; with
 * `auto` nothing (most have captions), their transcriptions counted when made; with captions,
 * the budget is not consulted.
 */
export function modelSecondsUpFront(
  mode: 'captions' | 'auto' | 'transcribe',
  audioSeconds: readonly number[],
): number | null {
  if (mode === 'captions') return null;
  return mode === 'transcribe' ? audioSeconds.reduce((sum, n) => sum + n, 0) : 0;
}

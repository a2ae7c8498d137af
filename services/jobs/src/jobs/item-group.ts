/**
 * One refill of a job's item pool (item-pool.ts): the items that start together share one credit
 * reservation and one take of the account's model budget, and each goes to the bulk fan-out on
 * its own, so each frees its place in the pool the moment it has its outcome.
 *
 * - The reservation is the most the items may cost (item-charges.ts: with `mode`, from each video's
 *   duration); with fewer credits than that, the first items the balance pays for start and the
 *   rest wait. It is committed once the group's last item is recorded, for what was delivered
 *   only (failures are free): one usage event per group, `successfulItems` of `attemptedItems`.
 * - A group that may have audio transcribed takes its length of the model budget first (each
 *   retry takes it again) and settles it against what the model processed once its items are done.
 */
import { Errors, isAppError, type AppError } from '@subx/errors';
import type { AccessPricing } from '@subx/credits';
import { modelSecondsUpFront, type ModelBudget } from '@subx/credits';
import type { CreditLedger, Reservation, Tier } from '@subx/credits';
import type { ExtractorBackend } from '@subx/backends';
import { durationsFrom, itemCharges, modelSecondsOf, overAudioCap } from '@subx/credits';
import type { ItemCharges } from '@subx/credits';
import { TRANSCRIPT_MODE } from '@subx/public-api';
import type { FanOut, FanOutOutcome } from '@subx/fanout';
import type { JobDoc, JobItem } from './model.ts';

export interface ItemGroupDeps {
  fanOut: FanOut;
  extractor: Pick<ExtractorBackend, 'validateVideo'>;
  credits: CreditLedger;
  pricing: AccessPricing;
  modelBudget?: { budget: ModelBudget; tierOf(accountId: string): Promise<Tier | null> };
  config: { JOB_ITEM_TIMEOUT_MS: number; JOB_ROUND_TIMEOUT_MS: number };
}

export interface ItemGroup {
  readonly requestId: string;
  /** The refill's credit reservation (null: it holds nothing, a reservation of 0). */
  readonly reservationId: string | null;
  /** The items started, in order; `k` below is a position in it. */
  readonly indexes: readonly number[];
  /** Item k through the fan-out: its outcome, a transcript past the job's audio cap not delivered. */
  run(k: number): Promise<FanOutOutcome>;
  /** What delivering item k costs (its transcript counts the model's work). */
  cost(k: number, outcome: FanOutOutcome & { ok: true }): number;
  /** Item k was recorded as delivered at `credits`: the group's commit charges them. */
  delivered(credits: number): void;
  /** Once every item is done: commits what was delivered, settles the model budget. */
  close(): Promise<void>;
}

/**
 * Reserves what the first `count` items may cost (`prices`, in order); with fewer credits than
 * that, as many items as the balance pays for. Resolves with the items it reserved for.
 */
async function reserveUpTo(
  credits: CreditLedger,
  job: JobDoc,
  prices: readonly number[],
  count: number,
  requestId: string,
): Promise<{ reservation: Reservation; count: number }> {
  const amount = prices.slice(0, count).reduce((sum, n) => sum + n, 0);
  try {
    const reservation = await credits.reserve({
      accountId: job.account_id,
      operation: 'jobs',
      amount,
      requestId,
    });
    return { reservation, count };
  } catch (error) {
    // Fewer credits than the group needs: start as many items as the balance pays for.
    const available =
      isAppError(error) && error.code === 'INSUFFICIENT_CREDITS' ? error.details?.available : undefined;
    if (typeof available === 'number' && count > 1) {
      let fits = 0;
      for (let sum = 0; fits < count - 1 && sum + prices[fits]! <= available; fits++) sum += prices[fits]!;
      if (fits > 0) return reserveUpTo(credits, job, prices, fits, requestId);
    }
    throw error;
  }
}

/**
 * Reserves for `candidates` (as many as the balance pays for, at least one) and takes the model
 * budget. Rejects with INSUFFICIENT_CREDITS when not even the first item can be paid for; the items
 * it did not start are left to the caller.
 */
export async function startItemGroup(
  deps: ItemGroupDeps,
  job: JobDoc,
  items: readonly JobItem[],
  candidates: readonly number[],
  requestId: string,
): Promise<ItemGroup> {
  const { config } = deps;
  const mode = job.options.mode ?? 'captions';
  const charges: ItemCharges = await itemCharges(
    candidates.map((i) => items[i]!.video_id),
    { translate: job.options.translate, mode, capSeconds: job.options.max_audio_seconds ?? 0 },
    deps.pricing,
    durationsFrom(deps.extractor, requestId, Math.min(30_000, config.JOB_ITEM_TIMEOUT_MS)),
  );
  const reserved = await reserveUpTo(deps.credits, job, charges.reserved, candidates.length, requestId);
  const reservation = reserved.reservation;
  const indexes = candidates.slice(0, reserved.count);
  const audioSeconds = indexes.map((_index, k) => charges.audioSeconds[k] ?? 0);
  const modelSeconds = modelSecondsUpFront(mode, audioSeconds);
  let tier: Tier | null = null;
  /** Seconds taken of the budget and not settled yet (undefined: none). */
  let budgetTaken: number | undefined;
  let refused: AppError | undefined;
  try {
    tier = modelSeconds !== null && deps.modelBudget ? await deps.modelBudget.tierOf(job.account_id) : null;
    if (tier) {
      refused = await deps.modelBudget!.budget.take({ id: job.account_id, tier }, modelSeconds ?? 0).then(
        () => undefined,
        (error: unknown) => {
          if (isAppError(error) && error.code === 'RATE_LIMITED') return error;
          throw error;
        },
      );
      if (!refused) budgetTaken = modelSeconds ?? 0;
    }
  } catch (error) {
    await reservation.release().catch(() => {});
    throw error;
  }

  /** What the fan-out answered per item, before the audio cap (the model's work is counted on it). */
  const answered: (FanOutOutcome | undefined)[] = indexes.map(() => undefined);
  let charged = 0;
  let successes = 0;
  const cap = job.options.max_audio_seconds ?? 0;

  async function fanOutOne(index: number): Promise<FanOutOutcome> {
    const outcomes = await deps.fanOut
      .run({
        requestId,
        accountId: job.account_id,
        jobs: [
          {
            videoId: items[index]!.video_id!,
            language: job.options.language,
            include: job.options.include,
            translate: job.options.translate,
            mode: TRANSCRIPT_MODE[mode],
            ...(job.options.max_audio_seconds === undefined
              ? {}
              : { maxAudioSeconds: job.options.max_audio_seconds }),
          },
        ],
        totalTimeoutMs: config.JOB_ROUND_TIMEOUT_MS,
        itemTimeoutMs: config.JOB_ITEM_TIMEOUT_MS,
      })
      .catch((error: unknown): FanOutOutcome[] => [{ ok: false, error: Errors.internal(error) }]);
    return outcomes[0] ?? { ok: false, error: Errors.internal() };
  }

  return {
    requestId,
    reservationId: reservation.id,
    indexes,
    async run(k) {
      const outcome: FanOutOutcome = refused ? { ok: false, error: refused } : await fanOutOne(indexes[k]!);
      answered[k] = outcome;
      // A transcript longer than the job's cap (cached for another tier) is not delivered.
      const overCap = outcome.ok ? overAudioCap(outcome.transcript, cap, tier ?? undefined) : undefined;
      return overCap ? { ok: false, error: overCap } : outcome;
    },
    cost: (k, outcome) => charges.spent(k, outcome.transcript),
    delivered(credits) {
      charged += credits;
      successes += 1;
    },
    async close() {
      const committed = await reservation
        .commit(charged, { successfulItems: successes, attemptedItems: indexes.length })
        .then(
          () => null,
          async (error: unknown) => {
            await reservation.release().catch(() => {});
            return { error };
          },
        );
      if (budgetTaken !== undefined) {
        const spent = answered.reduce((sum, o, k) => sum + modelSecondsOf(o, audioSeconds[k] ?? 0), 0);
        await deps.modelBudget!.budget.settle(job.account_id, budgetTaken, spent);
      }
      if (committed) throw committed.error;
    },
  };
}

/**
 * GET /api/v1/account: the calling key's tier, balance, today's requests against the daily limit,
 * what the tier may call, its job limits and its model budget (account-operations.ts). Account-only: the key must be
 * valid, nothing is counted against the daily limit or charged; the free reads' per-minute limit
 * applies.
 */
import { AppError } from '@subx/errors';
import { tierAllows } from '@subx/credits';
import { operationAccess } from '../access/capabilities.ts';
import { apiOperation } from './operations.ts';
import { routeOptions, routePath } from '../http/route-context.ts';
import type { RouteRegistrar } from '../http/route-context.ts';

export const registerAccount: RouteRegistrar = (app, ctx) => {
  const spec = apiOperation('getAccount');
  app.get(routePath(spec), routeOptions(ctx, spec), async (request, reply) => {
    const account = request.account!;
    const standing = ctx.deps.accountStanding;
    if (!standing)
      throw new AppError('SERVICE_UNAVAILABLE', 'Account reads are not enabled on this gateway.');
    const [{ creditsBalance, dailyUsed, daily }, model] = await Promise.all([
      standing(account),
      ctx.modelBudget.today(account),
    ]);
    const { pricing } = ctx;
    const transcribeMax = tierAllows(account.tier, 'pro') ? pricing.transcribeMaxSeconds[account.tier] : 0;
    // The balance changes with every paid request: no cache may answer for it.
    reply.header('cache-control', 'no-store');
    return {
      account_id: account.id,
      tier: account.tier,
      credits_balance: creditsBalance,
      monthly_allowance: pricing.monthlyAllowance[account.tier],
      daily_limit: daily.limit,
      daily_used: dailyUsed,
      daily_remaining: daily.remaining,
      resets_at: new Date(daily.resetAtMs).toISOString(),
      operations: operationAccess(account.tier, pricing),
      jobs: {
        max_items: pricing.jobMaxItems[account.tier],
        max_queued: pricing.jobMaxQueued[account.tier],
      },
      transcription: {
        max_seconds: transcribeMax,
        sync_max_seconds: Math.min(transcribeMax, ctx.deps.config.TRANSCRIBE_SYNC_MAX_SECONDS),
        model_seconds_per_day: model.perDay,
        model_seconds_used_today: Math.min(model.used, model.perDay),
      },
      request_id: request.id,
    };
  });
};

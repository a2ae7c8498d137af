/**
 * AccessControl.admit: 401 UNAUTHORIZED → 403 TIER_REQUIRED → 429 RATE_LIMITED, in that order.
 * Only requests that pass the first two checks are counted; a 429 is not counted (the atomic
 * increment was not applied) and a 5xx is un-counted through `refund`.
 */
import { Errors } from '@subx/errors';
import type { Clock } from '@subx/ports';
import { countRateLimitRejection } from '@subx/service-kit';
import type { AccessControl } from './types.ts';
import type { AccountRepository } from './accounts.ts';
import type { DelegationRegistry } from './delegation.ts';
import type { AccessPricing } from './pricing.ts';
import { tierAllows } from './pricing.ts';
import type { DailyRateLimiter } from './rate-limit.ts';
import { attachRateLimit, dailyLimitError } from './rate-limit.ts';

export function createAccessControl(deps: {
  accounts: Pick<AccountRepository, 'authenticate'>;
  rateLimiter: DailyRateLimiter;
  clock: Clock;
  pricing: AccessPricing;
  /** Single-use tokens of the admin API's calls on behalf of an account (delegation.ts). */
  delegations?: DelegationRegistry;
}): AccessControl {
  const { accounts, rateLimiter, clock, pricing, delegations } = deps;
  return {
    async admit({ apiKey, operation }) {
      const account = delegations?.redeem(apiKey) ?? (await accounts.authenticate(apiKey));
      if (!account) throw Errors.unauthorized();
      const required = pricing.minimumTier[operation];
      if (!tierAllows(account.tier, required)) {
        const state = await rateLimiter.peek(account);
        throw attachRateLimit(Errors.tierRequired(required, account.tier), state);
      }
      const consumed = await rateLimiter.consume(account, operation);
      if (!consumed.admitted) {
        countRateLimitRejection(account.tier, 'daily');
        throw dailyLimitError(consumed.state, clock.now());
      }
      return { account, rateLimit: consumed.state, refund: consumed.refund };
    },
    authenticate: (apiKey) => accounts.authenticate(apiKey),
  };
}

/**
 * AccessControl.admit: 401 UNAUTHORIZED → 403 TIER_REQUIRED → 429 RATE_LIMITED, in that order.
 * Only requests that pass the first two checks are counted; a 429 is not counted (the atomic
 * increment was not applied) and a 5xx is un-counted through `refund`.
 */
import { Errors } from '@subx/errors';
import type { Clock } from '@subx/ports';
import { countRateLimitRejection } from '@subx/service-kit';
import type { AccessControl, Admission } from './types.ts';
import type { Account, Operation } from '@subx/credits';
import type { AccountRepository } from './accounts.ts';
import type { DelegationRegistry } from './delegation.ts';
import type { AccessPricing } from '@subx/credits';
import { tierAllows } from '@subx/credits';
import type { Consumed, DailyRateLimiter } from '@subx/credits';
import { attachRateLimit, dailyLimitError } from './rate-limit.ts';

export function createAccessControl(deps: {
  accounts: Pick<AccountRepository, 'authenticate' | 'authenticateNow'>;
  rateLimiter: DailyRateLimiter;
  clock: Clock;
  pricing: AccessPricing;
  /** Single-use tokens of the admin API's calls on behalf of an account (delegation.ts). */
  delegations?: DelegationRegistry;
}): AccessControl {
  const { accounts, rateLimiter, clock, pricing, delegations } = deps;

  function admitted(account: Account, consumed: Consumed): Admission {
    if (!consumed.admitted) {
      countRateLimitRejection(account.tier, 'daily');
      throw dailyLimitError(consumed.state, clock.now());
    }
    return { account, rateLimit: consumed.state, refund: consumed.refund };
  }

  function admitAccount(account: Account | null, operation: Operation): Admission | Promise<Admission> {
    if (!account) throw Errors.unauthorized();
    const required = pricing.minimumTier[operation];
    if (!tierAllows(account.tier, required)) {
      return rateLimiter.peek(account).then((state) => {
        throw attachRateLimit(Errors.tierRequired(required, account.tier), state);
      });
    }
    const consumed = rateLimiter.consume(account, operation);
    if (consumed instanceof Promise) return consumed.then((c) => admitted(account, c));
    return admitted(account, consumed);
  }

  return {
    admit({ apiKey, operation }) {
      // A key in the cache and a counter in this process decide at once (see AccessControl.admit).
      try {
        const known = delegations?.redeem(apiKey) ?? accounts.authenticateNow(apiKey);
        if (known !== undefined) return admitAccount(known, operation);
      } catch (error) {
        return Promise.reject(error);
      }
      return accounts.authenticate(apiKey).then((account) => admitAccount(account, operation));
    },
    authenticate: (apiKey) => accounts.authenticate(apiKey),
  };
}

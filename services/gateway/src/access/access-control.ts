/**
 * AccessControl.admit: 401 UNAUTHORIZED → 403 SOURCE_NOT_ALLOWED → 403 INSUFFICIENT_SCOPE → 403
 * TIER_REQUIRED → 429 RATE_LIMITED, in that order. Only requests that pass the first four checks
 * are counted; a 429 is not counted (the atomic increment was not applied) and a 5xx is un-counted
 * through `refund`.
 */
import type { ApiKeyScope } from '@subx/contracts/access';
import { Errors } from '@subx/errors';
import type { Clock } from '@subx/ports';
import { countRateLimitRejection } from '@subx/service-kit';
import type { AccessControl, Admission, KeyCall } from './types.ts';
import type { Account, Operation } from '@subx/credits';
import type { AccountRepository } from './accounts.ts';
import type { DelegationRegistry } from './delegation.ts';
import type { AccessPricing } from '@subx/credits';
import { tierAllows } from '@subx/credits';
import type { Consumed, DailyRateLimiter } from '@subx/credits';
import { refusalOf, type KeyHolder, type KeyRefusal } from './key-limits.ts';
import { attachRateLimit, dailyLimitError } from './rate-limit.ts';

/** The scope each metered operation needs (the operation table's rows name the same). */
export const OPERATION_SCOPES: Record<Operation, ApiKeyScope> = {
  extract: 'transcripts:read',
  batch: 'transcripts:read',
  playlist: 'transcripts:read',
  comments: 'transcripts:read',
  search: 'transcripts:read',
  summarize: 'ai',
  comments_analyze: 'ai',
  jobs: 'jobs',
};

export interface KeyUseObserver {
  /** A call the key's limits refused (403): the audit log records it. */
  refused(holder: KeyHolder, refusal: KeyRefusal, call: KeyCall): void;
  /** A call the key may make: its last use is noted. */
  used(holder: KeyHolder): void;
}

export function createAccessControl(deps: {
  accounts: Pick<AccountRepository, 'authenticate' | 'authenticateNow'>;
  rateLimiter: DailyRateLimiter;
  clock: Clock;
  pricing: AccessPricing;
  /** Single-use tokens of the admin API's calls on behalf of an account (delegation.ts). */
  delegations?: DelegationRegistry;
  keyUse?: KeyUseObserver;
}): AccessControl {
  const { accounts, rateLimiter, clock, pricing, delegations, keyUse } = deps;

  function admitted(account: Account, consumed: Consumed): Admission {
    if (!consumed.admitted) {
      countRateLimitRejection(account.tier, 'daily');
      throw dailyLimitError(consumed.state, clock.now());
    }
    return { account, rateLimit: consumed.state, refund: consumed.refund };
  }

  /** The key's own limits: throws 401/403 when they refuse the call. */
  function allowed(holder: KeyHolder | null, call: KeyCall): KeyHolder {
    if (!holder) throw Errors.unauthorized();
    const refusal = refusalOf(holder, call, clock.now());
    if (refusal) {
      keyUse?.refused(holder, refusal, call);
      throw refusal.error;
    }
    keyUse?.used(holder);
    return holder;
  }

  function admitAccount(
    holder: KeyHolder | null,
    operation: Operation,
    call: KeyCall,
  ): Admission | Promise<Admission> {
    const account = allowed(holder, call);
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
    admit({ apiKey, operation, sourceIp }) {
      const call = { scope: OPERATION_SCOPES[operation], sourceIp };
      // A key in the cache and a counter in this process decide at once (see AccessControl.admit).
      try {
        const known = delegations?.redeem(apiKey) ?? accounts.authenticateNow(apiKey);
        if (known !== undefined) return admitAccount(known, operation, call);
      } catch (error) {
        return Promise.reject(error);
      }
      return accounts.authenticate(apiKey).then((holder) => admitAccount(holder, operation, call));
    },
    authenticate: (apiKey) => accounts.authenticate(apiKey),
    async authorize({ apiKey, scope, sourceIp }: { apiKey: string | undefined } & KeyCall) {
      return allowed(await accounts.authenticate(apiKey), { scope, sourceIp });
    },
  };
}

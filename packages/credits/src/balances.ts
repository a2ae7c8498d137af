/**
 * The part of an account document that money touches: its tier, its balance, the month of its
 * last allowance and the open holds. The edge (the gateway's access/accounts.ts) owns the rest of
 * the document (e-mail, the key); the ledger and the job service read and write only these fields,
 * in the same `accounts` collection, so a charge made by either is one conditional update.
 */
import type { Clock, Collection, Doc, DocumentStore } from '@subx/ports';
import type { AccessPricing } from './pricing.ts';
import { utcMonth } from './time.ts';
import type { Tier } from './types.ts';

export const ACCOUNTS_COLLECTION = 'accounts';

export interface AccountBalanceDoc extends Doc {
  _id: string;
  tier: Tier;
  /** Available balance (open reservations already taken off). Never negative. */
  credits: number;
  /** YYYY-MM of the last monthly allowance granted. */
  allowance_month: string;
  updated_at: string;
  /** Open credit reservations: reservation id → credits taken off `credits`. */
  holds: Record<string, number>;
}

export interface AccountBalances {
  readonly collection: Collection<AccountBalanceDoc>;
  /** Grants this month's allowance of the account's tier, once per month however many race. */
  ensureMonthlyAllowance(accountId: string): Promise<void>;
  /** The account's tier now; null when there is no such account. */
  tierOf(accountId: string): Promise<Tier | null>;
}

export function createAccountBalances(deps: {
  store: DocumentStore;
  clock: Clock;
  pricing: AccessPricing;
}): AccountBalances {
  const { clock, pricing } = deps;
  const accounts = deps.store.collection<AccountBalanceDoc>(ACCOUNTS_COLLECTION);
  return {
    collection: accounts,
    async ensureMonthlyAllowance(accountId) {
      const month = utcMonth(clock.now());
      const current = await accounts.findOne({ _id: accountId });
      if (!current || current.allowance_month >= month) return;
      // The month in the filter makes the grant happen once, however many replicas race here.
      await accounts.updateOne(
        { _id: accountId, allowance_month: { $lt: month } },
        {
          $inc: { credits: pricing.monthlyAllowance[current.tier] },
          $set: { allowance_month: month, updated_at: new Date(clock.now()).toISOString() },
        },
      );
    },
    async tierOf(accountId) {
      return (await accounts.findOne({ _id: accountId }))?.tier ?? null;
    },
  };
}

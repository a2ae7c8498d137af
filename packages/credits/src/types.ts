/**
 * Accounts, tiers, metered operations and the credit ledger's interface: what the edge (the
 * gateway's access control) and the job service share when they charge an account.
 */
import { ACCOUNT_TIERS } from '@subx/contracts/admin-api';

/** Defined with the admin API's schemas (the dashboard's client reads the same list). */
export const TIERS = ACCOUNT_TIERS;
export type Tier = (typeof TIERS)[number];

/** The operations access control meters: counted against the daily limit, priced, and reported per operation in usage. */
export const METERED_OPERATIONS = [
  'extract',
  'batch',
  'playlist',
  'summarize',
  'comments',
  'comments_analyze',
  'jobs',
  'search',
] as const;
export type Operation = (typeof METERED_OPERATIONS)[number];

export interface Account {
  id: string;
  tier: Tier;
  /**
   * The API key the request came with (accounts.ts keyIdOf); absent when the admin token acts for
   * the account or a watch's run does. What the key creates carries it.
   */
  keyId?: string;
}

export interface RateLimitState {
  /** null for unlimited tiers (then no X-RateLimit-* headers are sent). */
  limit: number | null;
  remaining: number | null;
  /** Next 00:00 UTC, epoch ms. */
  resetAtMs: number;
}

export interface UsageReport {
  /** Batch/playlist: items that succeeded and were attempted; otherwise 1/1. */
  successfulItems?: number;
  attemptedItems?: number;
  attributes?: Record<string, string>;
}

export interface Reservation {
  /** The reservation's id in the ledger (null: a reservation of 0 holds nothing). */
  readonly id: string | null;
  readonly reserved: number;
  /** The balance once a charging commit has settled (X-Credits-Remaining); unset before or without. */
  readonly remaining?: number;
  /**
   * Charges `credits` (0 <= credits <= reserved), returns the rest to the balance and, when
   * credits > 0, records exactly one credit-usage event (outbox → billing.credit-usage.v1).
   * Idempotent: a second commit or a release after commit does nothing.
   */
  commit(credits: number, usage?: UsageReport): Promise<void>;
  /** Returns the whole reservation to the balance (the work failed). Idempotent. */
  release(): Promise<void>;
}

export interface CreditLedger {
  /**
   * Atomically takes `amount` from the balance (the balance never goes below zero under any
   * concurrency). Throws AppError INSUFFICIENT_CREDITS naming required and available.
   * `amount` may be 0 (a no-op reservation whose commit charges nothing).
   */
  reserve(input: {
    accountId: string;
    operation: Operation;
    amount: number;
    requestId: string;
    /** The client's Idempotency-Key, carried into the usage event's envelope. */
    idempotencyKey?: string;
    /** The reservation's id, when the caller must find it again; a second one with it throws DuplicateKeyError. */
    id?: string;
  }): Promise<Reservation>;
  /**
   * Settles a reservation its holder could not (a crashed or stalled job runner), for `credits` it
   * recorded as delivered, exactly once however often it is called: commits it when it is still
   * open ('settled'; 'committed' when it was committed already); when recovery has released it,
   * charges the credits afresh under a reservation derived from it ('made_up'), or answers
   * 'unpaid' when the balance no longer covers them.
   */
  settleLeftover(input: {
    reservationId: string;
    accountId: string;
    operation: Operation;
    requestId: string;
    credits: number;
    usage?: UsageReport;
  }): Promise<'settled' | 'committed' | 'made_up' | 'unpaid'>;
}

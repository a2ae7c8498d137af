/**
 * What the HTTP routes need from access control (accounts, keys, tiers, rate limits, credits).
 * Routes depend on these interfaces only; `access/` implements them on the ports.
 *
 * Order of checks on an authenticated operation (decisions.md):
 * 401 UNAUTHORIZED → 403 SOURCE_NOT_ALLOWED → 403 INSUFFICIENT_SCOPE → 403 TIER_REQUIRED →
 * 429 RATE_LIMITED → 400 validation → 402 INSUFFICIENT_CREDITS → work.
 */
import type { ApiKeyScope } from '@subx/contracts/access';
import type { Account, Operation, RateLimitState } from '@subx/credits';

/** What a call asks of a key: the operation's scope, from the caller's address. */
export interface KeyCall {
  /** null: no scope is needed (the key's expiry and networks still are checked). */
  scope: ApiKeyScope | null;
  /** The client address as fastify reports it (`request.ip`). */
  sourceIp: string | undefined;
}

/** An account's standing now: what GET /api/v1/account answers beside the pricing table. */
export interface AccountStanding {
  /** Available credits (open reservations already taken off). */
  creditsBalance: number;
  /** Requests counted today (UTC). */
  dailyUsed: number;
  /** The daily limit, what is left of it and when it resets. */
  daily: RateLimitState;
}

/** The account as its export carries it (GET /api/v1/account/export): no key, no hash. */
export interface AccountProfile {
  id: string;
  tier: string;
  /** Available credits after this month's allowance. */
  credits_balance: number;
  created_at: string;
  /** As stored (dashboard sign-up); null when none was given. */
  email: string | null;
}

export interface Admission {
  account: Account;
  rateLimit: RateLimitState;
  /** Un-counts this request (it ended in a 5xx). Idempotent. */
  refund(): Promise<void>;
}

export interface AccessControl {
  /**
   * Authenticates the key, checks its limits (expiry, source networks, the operation's scope),
   * the tier the operation needs, and counts the request against the daily limit — in that
   * order. Refuses with AppError UNAUTHORIZED / SOURCE_NOT_ALLOWED / INSUFFICIENT_SCOPE /
   * TIER_REQUIRED / RATE_LIMITED;
   * a RATE_LIMITED or TIER_REQUIRED error carries its RateLimitState out of band: read it with
   * `rateLimitOf(error)` (access/index.ts) to send the X-RateLimit-* headers. It is deliberately
   * not in `details`, which toPublicErrorBody copies into the public body.
   *
   * The admission itself, not a promise, when nothing has to be waited for (the key in the
   * gateway's cache, the daily counter in this process: `npm start`); a refusal always comes as a
   * rejected promise, never as a throw.
   */
  admit(input: {
    apiKey: string | undefined;
    operation: Operation;
    /** The caller's address, for a key limited to some networks. */
    sourceIp?: string | undefined;
  }): Admission | Promise<Admission>;
  /**
   * The key's account, or null for a missing, ill-formed, unknown or revoked key. Counts nothing:
   * the MCP endpoint answers its own 401 with it, and each tool call is then admitted by its route.
   */
  authenticate(apiKey: string | undefined): Promise<Account | null>;
  /**
   * The key's account when the key may make a call needing `scope` from `sourceIp`: the free
   * account routes' check. Rejects with 401 UNAUTHORIZED, 403 SOURCE_NOT_ALLOWED or 403
   * INSUFFICIENT_SCOPE; counts nothing.
   */
  authorize(input: { apiKey: string | undefined } & KeyCall): Promise<Account>;
}

/** A stored HTTP response for Idempotency-Key replay. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type IdempotencyClaim =
  | { kind: 'new' }
  | { kind: 'replay'; response: StoredResponse }
  /** Same key still being processed by another request: 409 CONFLICT. */
  | { kind: 'in_progress' };

export interface IdempotencyStore {
  /**
   * Claims (account, key) for this request, or returns the response of the earlier request
   * with the same key (kept 24 h). `fingerprint` (method + path + body hash) must match the
   * earlier request, else INVALID_REQUEST.
   */
  claim(accountId: string, key: string, fingerprint: string): Promise<IdempotencyClaim>;
  complete(accountId: string, key: string, response: StoredResponse): Promise<void>;
  /** The request failed without charging: the key may be used again. */
  abandon(accountId: string, key: string): Promise<void>;
}

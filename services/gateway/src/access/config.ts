/**
 * Access-control configuration from the environment. Pure: reads the `env` object it is given.
 *
 * API_KEY_PEPPER   HMAC key for stored API key hashes (>= 32 chars). Required unless embedded,
 *                  where a random one is generated (keys then do not survive a restart).
 * ADMIN_TOKEN      Bearer token of the admin API (>= 32 chars). Required unless embedded (then
 *                  generated: 32 random bytes, base64url).
 * ACCESS_PRICING_JSON  Optional JSON merged over DEFAULT_PRICING (limits, allowances, prices).
 * IP_RATE_LIMIT_PER_MINUTE  Per-IP limit of /api/v1/validate (default 60; /health is never limited).
 * KEY_CACHE_TTL_MS  In-process key cache lifetime (default 30000).
 */
import { randomBytes } from 'node:crypto';
import { ConfigError } from '@subx/service-kit';
import type { ConfigIssue } from '@subx/service-kit';
import type { AccessPricing } from './pricing.ts';
import { DEFAULT_PRICING } from './pricing.ts';
import { DEFAULT_RESERVATION_TTL_MS } from './credit-ledger.ts';

export const MIN_ADMIN_TOKEN_LENGTH = 32;

export interface AccessConfig {
  apiKeyPepper: string;
  adminToken: string;
  pricing: AccessPricing;
  ipLimitPerMinute: number;
  keyCacheTtlMs: number;
  reservationTtlMs: number;
  outboxIntervalMs: number;
  creditUsageTopic: string;
  requestUsageTopic: string;
}

export interface LoadedAccessConfig {
  config: AccessConfig;
  /** Secrets that were generated because the environment had none (the launcher prints the admin token). */
  generated: { apiKeyPepper: boolean; adminToken: boolean };
}

function deepMerge<T>(base: T, override: unknown): T {
  if (typeof override !== 'object' || override === null || Array.isArray(override)) return override as T;
  if (typeof base !== 'object' || base === null || Array.isArray(base)) return override as T;
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [k, v] of Object.entries(override)) out[k] = deepMerge(out[k], v);
  return out as T;
}

function positiveInt(
  env: Record<string, string | undefined>,
  name: string,
  fallback: number,
  issues: ConfigIssue[],
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = /^\d+$/.test(raw.trim()) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n) || n <= 0) {
    issues.push({ key: name, message: 'must be a positive integer' });
    return fallback;
  }
  return n;
}

/** Reads the access variables; every problem is reported at once in one ConfigError (never a value). */
export function loadAccessConfig(
  env: Record<string, string | undefined>,
  options: { embedded?: boolean } = {},
): LoadedAccessConfig {
  const embedded = options.embedded ?? false;
  const issues: ConfigIssue[] = [];
  let pepper = env.API_KEY_PEPPER ?? '';
  let token = env.ADMIN_TOKEN ?? '';
  const generated = { apiKeyPepper: false, adminToken: false };
  if (!pepper) {
    if (!embedded) issues.push({ key: 'API_KEY_PEPPER', message: 'is required' });
    pepper = randomBytes(32).toString('base64url');
    generated.apiKeyPepper = true;
  } else if (pepper.length < 32) {
    issues.push({ key: 'API_KEY_PEPPER', message: 'must be at least 32 characters' });
  }
  if (!token) {
    if (!embedded) issues.push({ key: 'ADMIN_TOKEN', message: 'is required' });
    token = randomBytes(32).toString('base64url');
    generated.adminToken = true;
  } else if (token.length < MIN_ADMIN_TOKEN_LENGTH) {
    // Guessable tokens are the one thing the failure limit cannot make up for.
    issues.push({ key: 'ADMIN_TOKEN', message: `must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters` });
  }
  let pricing = DEFAULT_PRICING;
  if (env.ACCESS_PRICING_JSON) {
    try {
      pricing = deepMerge(DEFAULT_PRICING, JSON.parse(env.ACCESS_PRICING_JSON) as unknown);
    } catch {
      issues.push({ key: 'ACCESS_PRICING_JSON', message: 'must be JSON' });
    }
  }
  const config: AccessConfig = {
    apiKeyPepper: pepper,
    adminToken: token,
    pricing,
    ipLimitPerMinute: positiveInt(env, 'IP_RATE_LIMIT_PER_MINUTE', 60, issues),
    keyCacheTtlMs: positiveInt(env, 'KEY_CACHE_TTL_MS', 30_000, issues),
    reservationTtlMs: positiveInt(env, 'CREDIT_RESERVATION_TTL_MS', DEFAULT_RESERVATION_TTL_MS, issues),
    outboxIntervalMs: positiveInt(env, 'OUTBOX_INTERVAL_MS', 1_000, issues),
    creditUsageTopic: 'billing.credit-usage.v1',
    requestUsageTopic: 'billing.request-usage.v1',
  };
  if (issues.length > 0) throw new ConfigError(issues);
  return { config, generated };
}

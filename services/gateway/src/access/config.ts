/**
 * Access-control configuration from the environment, with service-kit's env helpers like every
 * other schema. Pure: reads the `env` object it is given.
 *
 * API_KEY_PEPPER   HMAC key for stored API key hashes (>= 32 chars). Required unless embedded,
 *                  where a random one is generated (keys then do not survive a restart).
 * ADMIN_TOKEN      Bearer token of the admin API (>= 32 chars). Required unless embedded (then
 *                  generated: 32 random bytes, base64url).
 * ADMIN_TOKEN_PREVIOUS, API_KEY_PEPPER_PREVIOUS  The secrets being rotated out: while set, the old
 *                  admin token is accepted too, and keys hashed under the old pepper still verify
 *                  (and are re-hashed under the new one on first use). Unset once rotated.
 * ACCESS_PRICING_JSON  Optional JSON merged over DEFAULT_PRICING (limits, allowances, prices),
 *                  checked by PricingOverrideSchema (pricing-config.ts).
 * IP_RATE_LIMIT_PER_MINUTE  Per-IP limit of /api/v1/validate (default 60; /health is never limited).
 * ACCOUNT_READ_LIMIT_PER_MINUTE  Per-account limit of the free reads: jobs and their results, the
 *                  webhook secret, MCP's handshake and tool list (default 300).
 * KEY_CACHE_TTL_MS  In-process key cache lifetime (default 30 s).
 * CREDIT_USAGE_TOPIC, REQUEST_USAGE_TOPIC  The usage topics billing reads (@subx/contracts TOPICS;
 *                  billing reads the same two variables).
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { TOPICS } from '@subx/contracts';
import { durationMs, jsonOf, loadConfig, nameString, positiveInt, secret } from '@subx/service-kit';
import type { AccessPricing } from '@subx/credits';
import { PricingOverrideSchema, pricingFrom } from '@subx/credits';
import { DEFAULT_RESERVATION_TTL_MS } from '@subx/credits';

const MIN_ADMIN_TOKEN_LENGTH = 32;

export interface AccessConfig {
  apiKeyPepper: string;
  /** The pepper being rotated out: keys stored under it verify, and are re-hashed on use. */
  apiKeyPepperPrevious?: string;
  adminToken: string;
  /** The admin token being rotated out: accepted alongside `adminToken` while set. */
  adminTokenPrevious?: string;
  pricing: AccessPricing;
  ipLimitPerMinute: number;
  accountReadLimitPerMinute: number;
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

const MIN_PEPPER_LENGTH = 32;

/** The access variables; the two secrets are optional only when embedded (then generated). */
export function accessEnvSchema(options: { embedded: boolean }) {
  const pepper = secret(
    z.string().min(MIN_PEPPER_LENGTH, { error: `must be at least ${MIN_PEPPER_LENGTH} characters` }),
  );
  // Guessable tokens are the one thing the failure limit cannot make up for.
  const token = secret(
    z
      .string()
      .min(MIN_ADMIN_TOKEN_LENGTH, { error: `must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters` }),
  );
  return z.object({
    API_KEY_PEPPER: options.embedded ? pepper.optional() : pepper,
    ADMIN_TOKEN: options.embedded ? token.optional() : token,
    API_KEY_PEPPER_PREVIOUS: pepper.optional(),
    ADMIN_TOKEN_PREVIOUS: token.optional(),
    ACCESS_PRICING_JSON: jsonOf(PricingOverrideSchema).optional(),
    IP_RATE_LIMIT_PER_MINUTE: positiveInt.default(60),
    ACCOUNT_READ_LIMIT_PER_MINUTE: positiveInt.default(300),
    KEY_CACHE_TTL_MS: durationMs.default(30_000),
    CREDIT_RESERVATION_TTL_MS: durationMs.default(DEFAULT_RESERVATION_TTL_MS),
    OUTBOX_INTERVAL_MS: durationMs.default(1_000),
    CREDIT_USAGE_TOPIC: nameString.default(TOPICS.creditUsage.default),
    REQUEST_USAGE_TOPIC: nameString.default(TOPICS.requestUsage.default),
  });
}

/** Reads the access variables; every problem is reported at once in one ConfigError (never a value). */
export function loadAccessConfig(
  env: Record<string, string | undefined>,
  options: { embedded?: boolean } = {},
): LoadedAccessConfig {
  const parsed = loadConfig(accessEnvSchema({ embedded: options.embedded ?? false }), env);
  const generated = { apiKeyPepper: !parsed.API_KEY_PEPPER, adminToken: !parsed.ADMIN_TOKEN };
  const config: AccessConfig = {
    apiKeyPepper: parsed.API_KEY_PEPPER ?? randomBytes(32).toString('base64url'),
    adminToken: parsed.ADMIN_TOKEN ?? randomBytes(32).toString('base64url'),
    ...(parsed.API_KEY_PEPPER_PREVIOUS ? { apiKeyPepperPrevious: parsed.API_KEY_PEPPER_PREVIOUS } : {}),
    ...(parsed.ADMIN_TOKEN_PREVIOUS ? { adminTokenPrevious: parsed.ADMIN_TOKEN_PREVIOUS } : {}),
    pricing: pricingFrom(parsed.ACCESS_PRICING_JSON),
    ipLimitPerMinute: parsed.IP_RATE_LIMIT_PER_MINUTE,
    accountReadLimitPerMinute: parsed.ACCOUNT_READ_LIMIT_PER_MINUTE,
    keyCacheTtlMs: parsed.KEY_CACHE_TTL_MS,
    reservationTtlMs: parsed.CREDIT_RESERVATION_TTL_MS,
    outboxIntervalMs: parsed.OUTBOX_INTERVAL_MS,
    creditUsageTopic: parsed.CREDIT_USAGE_TOPIC,
    requestUsageTopic: parsed.REQUEST_USAGE_TOPIC,
  };
  return { config, generated };
}

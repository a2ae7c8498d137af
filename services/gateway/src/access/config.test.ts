import { describe, expect, it } from 'vitest';
import { TOPICS } from '@subx/contracts';
import { ConfigError } from '@subx/service-kit';
import { refuseReservationsShorterThan } from '@subx/credits';
import { loadAccessConfig } from './config.ts';
import { DEFAULT_PRICING } from '@subx/credits';

const secrets = { API_KEY_PEPPER: 'p'.repeat(32), ADMIN_TOKEN: 't'.repeat(32) };

function issues(env: Record<string, string>): Record<string, string> {
  try {
    loadAccessConfig({ ...secrets, ...env });
  } catch (err) {
    if (err instanceof ConfigError) return Object.fromEntries(err.issues.map((i) => [i.key, i.message]));
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('access config', () => {
  it('merges a valid ACCESS_PRICING_JSON over the defaults, field by field', () => {
    const { config } = loadAccessConfig({
      ...secrets,
      ACCESS_PRICING_JSON: JSON.stringify({ dailyLimit: { pro: 20_000 }, prices: { commentsAnalyze: 5 } }),
    });
    expect(config.pricing.dailyLimit).toEqual({ ...DEFAULT_PRICING.dailyLimit, pro: 20_000 });
    expect(config.pricing.prices).toEqual({ ...DEFAULT_PRICING.prices, commentsAnalyze: 5 });
  });

  it('refuses an ACCESS_PRICING_JSON that does not fit the table, naming the field', () => {
    expect(issues({ ACCESS_PRICING_JSON: '{"dailyLimit":' })).toEqual({
      ACCESS_PRICING_JSON: 'must be JSON',
    });
    const bad = issues({
      ACCESS_PRICING_JSON: JSON.stringify({
        dailyLimits: { pro: 1 },
        dailyLimit: { pro: -5, gold: 1 },
        minimumTier: { summarize: 'platinum' },
        prices: {
          summarize: [
            { upToSeconds: 600, credits: 2 },
            { upToSeconds: 300, credits: 4 },
          ],
        },
      }),
    });
    expect(Object.keys(bad).sort()).toEqual([
      'ACCESS_PRICING_JSON',
      'ACCESS_PRICING_JSON.dailyLimit',
      'ACCESS_PRICING_JSON.dailyLimit.pro',
      'ACCESS_PRICING_JSON.minimumTier.summarize',
      'ACCESS_PRICING_JSON.prices.summarize.1.upToSeconds',
    ]);
    expect(bad['ACCESS_PRICING_JSON']).toMatch(/dailyLimits/);
    expect(bad['ACCESS_PRICING_JSON.prices.summarize.1.upToSeconds']).toMatch(/ascending/);
  });

  it('reads the usage topics from the variables billing reads, defaulting to @subx/contracts', () => {
    expect(loadAccessConfig(secrets).config).toMatchObject({
      creditUsageTopic: TOPICS.creditUsage.default,
      requestUsageTopic: TOPICS.requestUsage.default,
    });
    expect(
      loadAccessConfig({
        ...secrets,
        CREDIT_USAGE_TOPIC: 'acme.credits',
        REQUEST_USAGE_TOPIC: 'acme.requests',
      }).config,
    ).toMatchObject({ creditUsageTopic: 'acme.credits', requestUsageTopic: 'acme.requests' });
  });

  it('durations take units like every other; bad numbers are named', () => {
    expect(loadAccessConfig({ ...secrets, KEY_CACHE_TTL_MS: '1m' }).config.keyCacheTtlMs).toBe(60_000);
    expect(issues({ IP_RATE_LIMIT_PER_MINUTE: 'many', OUTBOX_INTERVAL_MS: '0' })).toEqual({
      IP_RATE_LIMIT_PER_MINUTE: 'must be a positive integer',
      OUTBOX_INTERVAL_MS: 'must be a positive duration in ms, or with a unit: 500ms, 10s, 2m, 1h, 7d',
    });
  });

  it('requires both secrets unless embedded, never echoing them', () => {
    let error: unknown;
    try {
      loadAccessConfig({ API_KEY_PEPPER: 'short-pepper' });
    } catch (err) {
      error = err;
    }
    expect((error as ConfigError).issues).toEqual([
      { key: 'API_KEY_PEPPER', message: 'must be at least 32 characters' },
      { key: 'ADMIN_TOKEN', message: 'is required' },
    ]);
    expect((error as Error).message).not.toContain('short-pepper');
    expect(loadAccessConfig({}, { embedded: true }).generated).toEqual({
      apiKeyPepper: true,
      adminToken: true,
    });
  });
});

describe('the credit hold outlives every request that holds credits', () => {
  const requests = { TRANSCRIBE_SYNC_DEADLINE_MS: 180_000, JOB_ROUND_TIMEOUT_MS: 120_000 };
  const refuse = (ttl: number) => () => refuseReservationsShorterThan(ttl, requests);

  it('the defaults: 15 minutes against a 3-minute transcription', () => {
    const { config } = loadAccessConfig({}, { embedded: true });
    expect(config.reservationTtlMs).toBe(900_000);
    expect(refuse(config.reservationTtlMs)).not.toThrow();
  });

  it('refuses a hold a live transcription could outlast, naming the variable', () => {
    expect(refuse(180_000)).toThrow(ConfigError);
    expect(refuse(180_000)).toThrow(/CREDIT_RESERVATION_TTL_MS.*TRANSCRIBE_SYNC_DEADLINE_MS/);
    expect(refuse(185_000)).not.toThrow();
  });
});

/**
 * GET /api/v1/account: the calling key's tier, balance, today's requests and limits. Free (no
 * credit, not counted against the daily limit), counted against the free reads' per-minute limit,
 * and it moves by exactly the credits and the one request an extract costs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_PRICING } from '@subx/credits';
import { KEYS, NEXT_MIDNIGHT, VIDEO_URL, buildTestGateway } from './support.ts';
import type { TestGateway } from './support.ts';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.app.close();
  gw = undefined;
});

const auth = (key: string) => ({ authorization: `Bearer ${key}` });
const read = (key: string) => gw!.app.inject({ method: 'GET', url: '/api/v1/account', headers: auth(key) });

describe('GET /api/v1/account', () => {
  it('answers the tier, balance, daily limit, operations and job limits of the key', async () => {
    gw = await buildTestGateway({ balances: { acc_free: 7 } });
    const res = await read(KEYS.free);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toEqual({
      account_id: 'acc_free',
      tier: 'free',
      credits_balance: 7,
      monthly_allowance: DEFAULT_PRICING.monthlyAllowance.free,
      daily_limit: DEFAULT_PRICING.dailyLimit.free,
      daily_used: 0,
      daily_remaining: DEFAULT_PRICING.dailyLimit.free,
      resets_at: new Date(NEXT_MIDNIGHT).toISOString(),
      operations: expect.objectContaining({
        extract: { minimum_tier: 'free', allowed: true },
        summarize: { minimum_tier: 'pro', allowed: false },
        jobs: { minimum_tier: 'pro', allowed: false },
        // the capabilities gated inside the operations
        watches: { minimum_tier: 'pro', allowed: false },
        transcription: { minimum_tier: 'pro', allowed: false },
        translation_by_model: { minimum_tier: 'free', allowed: true },
        embeddings: { minimum_tier: 'free', allowed: true },
      }),
      jobs: { max_items: 0, max_queued: 0 },
      transcription: {
        max_seconds: 0,
        sync_max_seconds: 0,
        model_seconds_per_day: DEFAULT_PRICING.modelSecondsPerDay.free,
        model_seconds_used_today: 0,
      },
      request_id: res.headers['x-request-id'],
    });
  });

  it('says null for an unlimited tier and gives the tier’s job limits', async () => {
    gw = await buildTestGateway();
    const body = (await read(KEYS.enterprise)).json();
    expect(body).toMatchObject({ tier: 'enterprise', daily_limit: null, daily_remaining: null });
    expect(body.operations).toMatchObject({
      watches: { minimum_tier: 'pro', allowed: true },
      transcription: { minimum_tier: 'pro', allowed: true },
    });
    expect(body.jobs).toEqual({
      max_items: DEFAULT_PRICING.jobMaxItems.enterprise,
      max_queued: DEFAULT_PRICING.jobMaxQueued.enterprise,
    });
    // The tier's own cap, and extract's wait under it (TRANSCRIBE_SYNC_MAX_SECONDS, 900 by default).
    expect(body.transcription).toEqual({
      max_seconds: DEFAULT_PRICING.transcribeMaxSeconds.enterprise,
      sync_max_seconds: 900,
      // bounded for every tier, Enterprise too
      model_seconds_per_day: DEFAULT_PRICING.modelSecondsPerDay.enterprise,
      model_seconds_used_today: 0,
    });
  });

  it('moves by exactly one credit and one request after an extract, and costs nothing itself', async () => {
    const pricing = { ...DEFAULT_PRICING, prices: { ...DEFAULT_PRICING.prices, extract: 1 } };
    gw = await buildTestGateway({ deps: { pricing }, balances: { acc_free: 10 } });
    const before = (await read(KEYS.free)).json();
    // Reading again changes nothing: the read is neither charged nor counted.
    expect((await read(KEYS.free)).json()).toMatchObject({
      credits_balance: before.credits_balance,
      daily_used: before.daily_used,
    });
    const extract = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      headers: { ...auth(KEYS.free), 'content-type': 'application/json' },
      payload: JSON.stringify({ url: VIDEO_URL }),
    });
    expect(extract.statusCode).toBe(200);
    const after = (await read(KEYS.free)).json();
    // What the extract said it cost is what the balance lost.
    expect(extract.json().credits_used).toBe(pricing.prices.extract);
    expect(after.credits_balance).toBe(before.credits_balance - pricing.prices.extract);
    expect(after.daily_used).toBe(before.daily_used + 1);
    expect(after.daily_remaining).toBe(before.daily_remaining - 1);
  });

  it('answers 401 without a valid key and 429 past the free reads’ limit', async () => {
    gw = await buildTestGateway({ readLimit: 2 });
    const missing = await gw.app.inject({ method: 'GET', url: '/api/v1/account' });
    expect(missing.statusCode).toBe(401);
    expect(missing.json()).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
    expect((await read(KEYS.pro)).statusCode).toBe(200);
    expect((await read(KEYS.pro)).statusCode).toBe(200);
    const limited = await read(KEYS.pro);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ error: { code: 'RATE_LIMITED' } });
    expect(gw.access.used.get('acc_pro') ?? 0).toBe(0);
  });
});

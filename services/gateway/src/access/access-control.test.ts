import { afterEach, describe, expect, it } from 'vitest';
import { AppError, Errors, toPublicErrorBody } from '@subx/errors';
import type { Collection, Doc, DocumentStore, KeyValueStore } from '@subx/ports';
import { ManualClock, createInMemoryDocumentStore, createInMemoryKeyValueStore } from '@subx/ports';
import { scrape } from '@subx/service-kit';
import { rateLimitBody, rateLimitHeaders, rateLimitJson, rateLimitOf } from './rate-limit.ts';
import type { Replicas } from '../../test/access/support.ts';
import { startReplicas } from '../../test/access/support.ts';
import { ACCOUNTS_COLLECTION } from '@subx/credits';
import type { Admission } from './types.ts';

let replicas: Replicas | undefined;
afterEach(async () => {
  await replicas?.stop();
  replicas = undefined;
});

/** subx_rate_limit_rejections_total for one tier's daily limit, from this process's metrics. */
async function dailyRejections(tier: string): Promise<number> {
  const series = `subx_rate_limit_rejections_total{tier="${tier}",limit="daily"} `;
  const line = (await scrape()).split('\n').find((l) => l.startsWith(series));
  return line === undefined ? 0 : Number(line.slice(series.length));
}

/** The refusal of an admission (admit answers with the admission itself, or a promise). */
async function rejection(promise: unknown): Promise<AppError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

/** A document store that counts reads of the accounts collection. */
function countingStore(inner: DocumentStore): { store: DocumentStore; reads: () => number } {
  let reads = 0;
  return {
    reads: () => reads,
    store: {
      ...inner,
      collection<T extends Doc>(name: string): Collection<T> {
        const c = inner.collection<T>(name);
        if (name !== ACCOUNTS_COLLECTION) return c;
        return {
          ...c,
          findOne: (filter) => {
            reads += 1;
            return c.findOne(filter);
          },
          find: (filter, options) => {
            reads += 1;
            return c.find(filter, options);
          },
        };
      },
    },
  };
}

describe('accounts and keys', () => {
  it('creates an account with a show-once key; only a keyed hash is stored', async () => {
    replicas = await startReplicas(1);
    const [m] = replicas.modules;
    const { account, apiKey } = await m!.accounts.createAccount({ tier: 'pro' });
    expect(apiKey).toMatch(/^sxk_v1_[A-Za-z0-9]{32}$/);
    expect(account.credits).toBe(5_000);
    const stored = await replicas.store.collection(ACCOUNTS_COLLECTION).findOne({ _id: account._id });
    const json = JSON.stringify(stored);
    expect(json).not.toContain(apiKey);
    expect(json).not.toContain(apiKey.slice(7, 30));
    expect(stored).toMatchObject({ key: { prefix: 'sxk_v1_', last4: apiKey.slice(-4), status: 'active' } });
    const admitted = await m!.access.admit({ apiKey, operation: 'extract' });
    expect(admitted.account).toEqual({ id: account._id, tier: 'pro', keyId: account.key.id });
  });

  it('refuses a regenerated key on another replica on the very next request', async () => {
    replicas = await startReplicas(2);
    const [a, b] = replicas.modules;
    const { account, apiKey: oldKey } = await a!.accounts.createAccount({ tier: 'free' });
    // Warm B's key cache with the old key.
    await b!.access.admit({ apiKey: oldKey, operation: 'extract' });
    await b!.access.admit({ apiKey: oldKey, operation: 'extract' });
    const newKey = await a!.accounts.regenerateKey(account._id);
    expect(newKey).not.toBeNull();
    expect((await rejection(b!.access.admit({ apiKey: oldKey, operation: 'extract' }))).code).toBe(
      'UNAUTHORIZED',
    );
    expect((await rejection(a!.access.admit({ apiKey: oldKey, operation: 'extract' }))).code).toBe(
      'UNAUTHORIZED',
    );
    const ok = await b!.access.admit({ apiKey: newKey!, operation: 'extract' });
    expect(ok.account.id).toBe(account._id);
  });

  it('refuses a revoked key on another replica on the very next request', async () => {
    replicas = await startReplicas(2);
    const [a, b] = replicas.modules;
    const { account, apiKey } = await a!.accounts.createAccount({ tier: 'business' });
    await b!.access.admit({ apiKey, operation: 'summarize' });
    expect(await a!.accounts.revokeKey(account._id)).toBe(true);
    const err = await rejection(b!.access.admit({ apiKey, operation: 'summarize' }));
    expect(err.code).toBe('UNAUTHORIZED');
    expect(err.status).toBe(401);
    const doc = await a!.accounts.get(account._id);
    expect(doc?.key.status).toBe('revoked');
  });

  it('applies a tier change at once on every replica (no stale tier in the key cache)', async () => {
    replicas = await startReplicas(2);
    const [a, b] = replicas.modules;
    const { account, apiKey } = await a!.accounts.createAccount({ tier: 'free' });
    expect((await rejection(b!.access.admit({ apiKey, operation: 'comments' }))).code).toBe('TIER_REQUIRED');
    await a!.accounts.update(account._id, { tier: 'pro' });
    const ok = await b!.access.admit({ apiKey, operation: 'comments' });
    expect(ok.account.tier).toBe('pro');
    expect(ok.rateLimit.limit).toBe(10_000);
    await a!.accounts.update(account._id, { tier: 'free' });
    expect((await rejection(b!.access.admit({ apiKey, operation: 'comments' }))).code).toBe('TIER_REQUIRED');
  });

  it('serves repeated authentications from the key cache', async () => {
    const counting = countingStore(createInMemoryDocumentStore());
    replicas = await startReplicas(1, { store: counting.store });
    const [m] = replicas.modules;
    const { apiKey } = await m!.accounts.createAccount({ tier: 'pro' });
    await m!.access.admit({ apiKey, operation: 'extract' });
    const after = counting.reads();
    for (let i = 0; i < 5; i += 1) await m!.access.admit({ apiKey, operation: 'extract' });
    expect(counting.reads()).toBe(after);
    // The cache is short-lived.
    replicas.clock.advance(60_000);
    await m!.access.admit({ apiKey, operation: 'extract' });
    expect(counting.reads()).toBeGreaterThan(after);
  });
});

describe('bad keys', () => {
  it('answers 401 for missing, malformed, injected, huge and non-UTF-8 keys without a lookup or a leak', async () => {
    const counting = countingStore(createInMemoryDocumentStore());
    replicas = await startReplicas(1, { store: counting.store });
    const [m] = replicas.modules;
    const { apiKey } = await m!.accounts.createAccount({ tier: 'pro' });
    const before = counting.reads();
    const bad = [
      undefined,
      '',
      'sxk_v1_',
      apiKey.slice(0, -1),
      `${apiKey}X`,
      `${apiKey.slice(0, 38)}!`,
      `${apiKey.slice(0, 37)}\r\n`,
      `${apiKey}\r\nX-Admin: 1`,
      `sxk_v1_${'A'.repeat(32)}`.replace('sxk', 'SXK'),
      `${apiKey.slice(0, 38)}\uFFFD`,
      Buffer.from([0x73, 0x78, 0x6b, 0xff, 0xfe]).toString('latin1').padEnd(39, '\u00ff'),
      'A'.repeat(1_000_000),
    ];
    for (const key of bad) {
      const err = await rejection(m!.access.admit({ apiKey: key, operation: 'extract' }));
      expect(err.code).toBe('UNAUTHORIZED');
      const body = JSON.stringify(toPublicErrorBody(err, 'req-1'));
      // The fixed message (it names the key format, `sxk_v1_` + 32 characters) echoes nothing sent.
      expect(err.message).toBe(Errors.unauthorized().message);
      if (key && !err.message.includes(key)) expect(body).not.toContain(key.slice(0, 39));
      expect(body).not.toContain(apiKey);
    }
    expect(counting.reads()).toBe(before);
    // A well-formed key that does not exist is looked up and refused.
    const err = await rejection(
      m!.access.admit({ apiKey: `sxk_v1_${'A'.repeat(32)}`, operation: 'extract' }),
    );
    expect(err.code).toBe('UNAUTHORIZED');
    expect(toPublicErrorBody(err, 'req-2').error).toMatchObject({
      code: 'UNAUTHORIZED',
      docs_url: '/docs/errors#unauthorized',
      request_id: 'req-2',
      retryable: false,
    });
  });
});

/** The same store seen as a remote one (Redis): no counters in this process. */
function remoteStore(kv: KeyValueStore): KeyValueStore {
  const { inProcess, ...remote } = kv;
  expect(inProcess).toBeDefined();
  return remote;
}

describe('an admission decided at once', () => {
  it('is the admission itself, not a promise, once the key is cached and the day counted here', async () => {
    replicas = await startReplicas(1);
    const [m] = replicas.modules;
    const { apiKey } = await m!.accounts.createAccount({ tier: 'pro' });
    // The key is not cached yet and the day's first request rebuilds the counter: both wait.
    const first = m!.access.admit({ apiKey, operation: 'extract' });
    expect(first).toBeInstanceOf(Promise);
    expect((await first).rateLimit).toMatchObject({ limit: 10_000, remaining: 9_999 });
    const second = m!.access.admit({ apiKey, operation: 'extract' });
    expect(second).not.toBeInstanceOf(Promise);
    expect((second as Admission).rateLimit).toMatchObject({ limit: 10_000, remaining: 9_998 });
    // A refund un-counts it as it does an awaited admission.
    await (second as Admission).refund();
    expect((await m!.access.admit({ apiKey, operation: 'extract' })).rateLimit.remaining).toBe(9_998);
    const unlimited = await m!.accounts.createAccount({ tier: 'enterprise' });
    await m!.access.admit({ apiKey: unlimited.apiKey, operation: 'extract' });
    const at = m!.access.admit({ apiKey: unlimited.apiKey, operation: 'extract' });
    expect(at).not.toBeInstanceOf(Promise);
    expect((at as Admission).rateLimit).toMatchObject({ limit: null, remaining: null });
  });

  it('refuses with a rejected promise, never a throw, however fast it decides', async () => {
    replicas = await startReplicas(1);
    const [m] = replicas.modules;
    // Malformed: decided without a lookup.
    const malformed = m!.access.admit({ apiKey: 'nope', operation: 'extract' });
    expect(malformed).toBeInstanceOf(Promise);
    expect((await rejection(malformed)).code).toBe('UNAUTHORIZED');
    const { apiKey } = await m!.accounts.createAccount({ tier: 'free' });
    for (let i = 0; i < 100; i += 1) await m!.access.admit({ apiKey, operation: 'extract' });
    const limited = m!.access.admit({ apiKey, operation: 'extract' });
    expect(limited).toBeInstanceOf(Promise);
    const error = await rejection(limited);
    expect(error.code).toBe('RATE_LIMITED');
    expect(rateLimitOf(error)).toMatchObject({ limit: 100, remaining: 0 });
    const tier = m!.access.admit({ apiKey, operation: 'summarize' });
    expect(tier).toBeInstanceOf(Promise);
    expect((await rejection(tier)).code).toBe('TIER_REQUIRED');
  });

  it('waits for a store that counts elsewhere, and counts the same', async () => {
    const clock = new ManualClock(Date.UTC(2026, 2, 15, 10, 0, 0));
    replicas = await startReplicas(1, { clock, kv: remoteStore(createInMemoryKeyValueStore({ clock })) });
    const [m] = replicas.modules;
    const { account, apiKey } = await m!.accounts.createAccount({ tier: 'free' });
    for (let i = 0; i < 100; i += 1) {
      const admission = m!.access.admit({ apiKey, operation: 'extract' });
      expect(admission).toBeInstanceOf(Promise);
      expect((await admission).rateLimit.remaining).toBe(99 - i);
    }
    expect((await rejection(m!.access.admit({ apiKey, operation: 'extract' }))).code).toBe('RATE_LIMITED');
    expect(await m!.rateLimiter.todayCount(account._id)).toBe(100);
  });
});

describe('tiers and daily limits', () => {
  it('checks 401 before 403 before 429, and 403 does not count', async () => {
    replicas = await startReplicas(1);
    const [m] = replicas.modules;
    expect((await rejection(m!.access.admit({ apiKey: undefined, operation: 'summarize' }))).code).toBe(
      'UNAUTHORIZED',
    );
    const { account, apiKey } = await m!.accounts.createAccount({ tier: 'free' });
    const tier = await rejection(m!.access.admit({ apiKey, operation: 'summarize' }));
    expect(tier.code).toBe('TIER_REQUIRED');
    expect(tier.status).toBe(403);
    expect(tier.message).toContain('pro');
    expect(rateLimitOf(tier)).toMatchObject({ limit: 100, remaining: 100 });
    // The state rides out of band: not in the public body.
    expect(JSON.stringify(toPublicErrorBody(tier, 'r'))).not.toContain('resetAtMs');
    for (let i = 0; i < 100; i += 1) await m!.access.admit({ apiKey, operation: 'extract' });
    // Exhausted: a pro-only operation is still 403 (tier before rate limit), extract is 429.
    const rejectedBefore = await dailyRejections('free');
    expect((await rejection(m!.access.admit({ apiKey, operation: 'comments_analyze' }))).code).toBe(
      'TIER_REQUIRED',
    );
    const limited = await rejection(m!.access.admit({ apiKey, operation: 'extract' }));
    expect(limited.code).toBe('RATE_LIMITED');
    // Only the 429 counts as a rate-limit rejection, under the account's tier.
    expect((await dailyRejections('free')) - rejectedBefore).toBe(1);
    expect(await m!.rateLimiter.todayCount(account._id)).toBe(100);
  });

  it('a Redis restart does not hand a free key its 100 requests again (item 8)', async () => {
    replicas = await startReplicas(1);
    const [m] = replicas.modules;
    const { account, apiKey } = await m!.accounts.createAccount({ tier: 'free' });
    for (let i = 0; i < 60; i += 1) await m!.access.admit({ apiKey, operation: 'extract' });
    const refunded = await m!.access.admit({ apiKey, operation: 'batch' });
    await refunded.refund(); // a 5xx: does not count
    for (let i = 0; i < 40; i += 1) await m!.access.admit({ apiKey, operation: 'batch' });
    await m!.requestLog.flush();

    // Redis restarted empty: same document store, a new (empty) key-value store.
    const { store, clock } = replicas;
    await replicas.stop();
    replicas = await startReplicas(1, { store, clock, kv: createInMemoryKeyValueStore({ clock }) });
    const [after] = replicas.modules;
    expect(await after!.rateLimiter.todayCount(account._id)).toBe(100);
    const limited = await rejection(after!.access.admit({ apiKey, operation: 'extract' }));
    expect(limited.code).toBe('RATE_LIMITED');
    expect(await after!.rateLimiter.todayCount(account._id)).toBe(100);
    const usage = await after!.usageReader.getUsage({
      accountId: account._id,
      from: '2026-03-15',
      to: '2026-03-15',
    });
    expect(usage.days[0]).toMatchObject({ requests: 100 });
    expect(usage.days[0]!.operations.extract.requests).toBe(60);
    expect(usage.days[0]!.operations.batch.requests).toBe(40);
  });

  it('admits exactly 100 of 150 concurrent requests of a free key across two replicas', async () => {
    replicas = await startReplicas(2);
    const [a, b] = replicas.modules;
    const { account, apiKey } = await a!.accounts.createAccount({ tier: 'free' });
    const results = await Promise.allSettled(
      Array.from({ length: 150 }, (_, i) =>
        (i % 2 === 0 ? a! : b!).access.admit({ apiKey, operation: i % 3 === 0 ? 'batch' : 'extract' }),
      ),
    );
    const ok = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r) => r.status === 'rejected');
    expect(ok).toHaveLength(100);
    expect(refused).toHaveLength(50);
    for (const r of refused) expect((r.reason as AppError).code).toBe('RATE_LIMITED');
    const remainings = ok.map((r) => r.value.rateLimit.remaining).sort((x, y) => x! - y!);
    expect(remainings).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(await a!.rateLimiter.todayCount(account._id)).toBe(100);
  });

  it('resets at 00:00 UTC with Retry-After counting down to it', async () => {
    replicas = await startReplicas(1);
    const [m] = replicas.modules;
    const clock = replicas.clock;
    clock.set(Date.UTC(2026, 2, 15, 23, 0, 0));
    const { apiKey } = await m!.accounts.createAccount({ tier: 'free' });
    for (let i = 0; i < 100; i += 1) await m!.access.admit({ apiKey, operation: 'playlist' });
    clock.set(Date.UTC(2026, 2, 15, 23, 59, 58, 500));
    const limited = await rejection(m!.access.admit({ apiKey, operation: 'extract' }));
    expect(limited.code).toBe('RATE_LIMITED');
    expect(limited.retryAfterSeconds).toBe(2);
    expect(rateLimitOf(limited)).toEqual({ limit: 100, remaining: 0, resetAtMs: Date.UTC(2026, 2, 16) });
    expect(rateLimitHeaders(rateLimitOf(limited)!)).toEqual({
      'x-ratelimit-limit': '100',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': '2026-03-16T00:00:00.000Z',
    });
    clock.set(Date.UTC(2026, 2, 16, 0, 0, 0));
    const fresh = await m!.access.admit({ apiKey, operation: 'extract' });
    expect(fresh.rateLimit).toEqual({ limit: 100, remaining: 99, resetAtMs: Date.UTC(2026, 2, 17) });
    expect(rateLimitBody(fresh.rateLimit)).toEqual({
      limit: 100,
      remaining: 99,
      reset: Date.UTC(2026, 2, 17) / 1000,
      reset_at: '2026-03-17T00:00:00.000Z',
    });
    // The extract's body is completed with the same object, written as JSON directly.
    expect(rateLimitJson(fresh.rateLimit)).toBe(JSON.stringify(rateLimitBody(fresh.rateLimit)));
    expect(rateLimitJson(rateLimitOf(limited)!)).toBe(JSON.stringify(rateLimitBody(rateLimitOf(limited)!)));
  });

  it('refunds a request that ended in a 5xx, once', async () => {
    replicas = await startReplicas(1);
    const [m] = replicas.modules;
    const { account, apiKey } = await m!.accounts.createAccount({ tier: 'free' });
    await m!.access.admit({ apiKey, operation: 'extract' });
    const second = await m!.access.admit({ apiKey, operation: 'extract' });
    expect(second.rateLimit.remaining).toBe(98);
    await second.refund();
    await second.refund();
    expect(await m!.rateLimiter.todayCount(account._id)).toBe(1);
    const third = await m!.access.admit({ apiKey, operation: 'extract' });
    expect(third.rateLimit.remaining).toBe(98);
  });

  it('does not limit enterprise keys and reports nulls without headers', async () => {
    replicas = await startReplicas(1);
    const [m] = replicas.modules;
    const { account, apiKey } = await m!.accounts.createAccount({ tier: 'enterprise' });
    let last;
    for (let i = 0; i < 120; i += 1) last = await m!.access.admit({ apiKey, operation: 'summarize' });
    expect(last!.rateLimit.limit).toBeNull();
    expect(last!.rateLimit.remaining).toBeNull();
    expect(rateLimitHeaders(last!.rateLimit)).toEqual({});
    expect(rateLimitBody(last!.rateLimit)).toMatchObject({ limit: null, remaining: null });
    expect(rateLimitJson(last!.rateLimit)).toBe(JSON.stringify(rateLimitBody(last!.rateLimit)));
    expect(await m!.rateLimiter.todayCount(account._id)).toBe(120);
  });
});

describe('per-IP limit of the open routes', () => {
  it('allows 60 per minute per address, then 429 with Retry-After until the next minute', async () => {
    replicas = await startReplicas(2);
    const [a, b] = replicas.modules;
    const clock = replicas.clock;
    clock.set(Date.UTC(2026, 2, 15, 10, 0, 15));
    for (let i = 0; i < 60; i += 1) await (i % 2 ? a! : b!).ipLimiter.check('203.0.113.7');
    const err = await rejection(a!.ipLimiter.check('203.0.113.7'));
    expect(err.code).toBe('RATE_LIMITED');
    expect(err.status).toBe(429);
    expect(err.retryAfterSeconds).toBe(45);
    await a!.ipLimiter.check('2001:db8::1');
    clock.set(Date.UTC(2026, 2, 15, 10, 1, 0));
    await a!.ipLimiter.check('203.0.113.7');
  });

  it('counts IPv6 callers by their /64: another address of the same prefix shares the bucket', async () => {
    replicas = await startReplicas(1);
    const [a] = replicas.modules;
    replicas.clock.set(Date.UTC(2026, 2, 15, 10, 0, 15));
    // A host rotating through its /64 (privacy addresses, or on purpose) stays one caller.
    for (let i = 0; i < 60; i += 1) await a!.ipLimiter.check(`2001:db8:1:2:${(i + 1).toString(16)}::1`);
    const err = await rejection(a!.ipLimiter.check('2001:db8:1:2:ffff:ffff:ffff:ffff'));
    expect(err.code).toBe('RATE_LIMITED');
    // The neighbouring /64 is someone else; IPv4-mapped addresses count as their IPv4 address.
    await a!.ipLimiter.check('2001:db8:1:3::1');
    for (let i = 0; i < 60; i += 1) await a!.ipLimiter.check(i % 2 ? '198.51.100.4' : '::ffff:198.51.100.4');
    expect((await rejection(a!.ipLimiter.check('198.51.100.4'))).code).toBe('RATE_LIMITED');
  });
});

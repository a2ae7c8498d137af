import { describe, expect, it } from 'vitest';
import { creditUsageV1, CLOUD_EVENT_KINDS } from '@subx/contracts';
import { AppError } from '@subx/errors';
import {
  ManualClock,
  createInMemoryDocumentStore,
  createInMemoryKeyValueStore,
  createInProcessEventBus,
} from '@subx/ports';
import type { BusMessage, DeliveredMessage, EventBus } from '@subx/ports';
import { createKeyCache } from './key-cache.ts';
import { createAccountRepository } from './accounts.ts';
import type { AccountDoc } from './accounts.ts';
import { DEFAULT_PRICING } from '@subx/credits';
import { CREDIT_OUTBOX, createCreditLedger, OUTBOX_COLLECTION } from '@subx/credits';
import type { ReservationDoc } from '@subx/credits';
import { createOutboxRelay } from '@subx/credits';
import { createIdempotencyStore } from './idempotency.ts';
import { silentLogger } from '@subx/ports';
import { waitFor } from '@subx/testing/wait';
import { TEST_PEPPER } from '../../test/access/support.ts';

const TOPIC = 'billing.credit-usage.v1';

async function setup(bus: EventBus = createInProcessEventBus()) {
  const clock = new ManualClock(Date.UTC(2026, 2, 15, 10, 0, 0));
  const store = createInMemoryDocumentStore();
  const kv = createInMemoryKeyValueStore({ clock });
  const keyCache = createKeyCache({ kv, clock, logger: silentLogger });
  await keyCache.start();
  const accounts = createAccountRepository({
    store,
    clock,
    pepper: TEST_PEPPER,
    pricing: DEFAULT_PRICING,
    keyCache,
  });
  await accounts.init();
  const ledger = createCreditLedger({ store, kv, clock, logger: silentLogger, accounts, topic: TOPIC });
  const relay = createOutboxRelay({
    store,
    bus,
    topic: TOPIC,
    cloudEvent: CLOUD_EVENT_KINDS.creditUsage,
    clock,
    logger: silentLogger,
    outbox: CREDIT_OUTBOX,
    intervalMs: 10,
  });
  const outbox = store.collection<ReservationDoc>(OUTBOX_COLLECTION);
  const balance = async (id: string) =>
    ((await store.collection<AccountDoc>('accounts').findOne({ _id: id })) as AccountDoc).credits;
  return { clock, store, kv, bus, accounts, ledger, relay, outbox, balance, stop: () => keyCache.stop() };
}

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

function decode(doc: ReservationDoc): creditUsageV1.CreditUsage {
  return creditUsageV1.CreditUsage.decode(Buffer.from(doc.payload!, 'base64'));
}

describe('credit reservation and commit', () => {
  it('lets exactly 10 of 50 concurrent 1-credit reservations through on a balance of 10', async () => {
    const t = await setup();
    const { account } = await t.accounts.createAccount({ tier: 'pro', credits: 10 });
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) =>
        t.ledger.reserve({ accountId: account._id, operation: 'batch', amount: 1, requestId: `req-${i}` }),
      ),
    );
    const ok = results.filter((r) => r.status === 'fulfilled').map((r) => r.value);
    const refused = results.filter((r) => r.status === 'rejected').map((r) => r.reason as AppError);
    expect(ok).toHaveLength(10);
    expect(refused).toHaveLength(40);
    for (const err of refused) {
      expect(err.code).toBe('INSUFFICIENT_CREDITS');
      expect(err.status).toBe(402);
      expect(err.details).toEqual({ required: 1, available: 0 });
    }
    expect(await t.balance(account._id)).toBe(0);
    // Half the callers charge their credit, half had a failure and charge nothing.
    await Promise.all(ok.map((r, i) => (i % 2 === 0 ? r.commit(1) : r.commit(0))));
    expect(await t.balance(account._id)).toBe(5);
    const pending = await t.outbox.find({ outbox_status: 'pending' });
    expect(pending).toHaveLength(5);
    expect(pending.reduce((n, d) => n + Number(decode(d).credits), 0)).toBe(5);
    // Nothing is left behind: no open reservations, no holds.
    expect(await t.outbox.countDocuments({ state: 'open' })).toBe(0);
    const doc = await t.store.collection<AccountDoc>('accounts').findOne({ _id: account._id });
    expect(doc?.holds).toEqual({});
    await t.stop();
  });

  it('commits part of a reservation, returns the rest, and writes one event carrying the usage', async () => {
    const t = await setup();
    const { account } = await t.accounts.createAccount({ tier: 'pro', credits: 20 });
    const r = await t.ledger.reserve({
      accountId: account._id,
      operation: 'playlist',
      amount: 10,
      requestId: 'req-pl',
      idempotencyKey: 'idem-1',
    });
    expect(r.reserved).toBe(10);
    expect(await t.balance(account._id)).toBe(10);
    expect(r.remaining).toBeUndefined();
    await r.commit(7, { successfulItems: 7, attemptedItems: 10, attributes: { playlist_id: 'PL1' } });
    await r.commit(7);
    await r.release();
    expect(await t.balance(account._id)).toBe(13);
    // The balance the charge left, as X-Credits-Remaining says it.
    expect(r.remaining).toBe(13);
    const docs = await t.outbox.find({ account_id: account._id });
    expect(docs).toHaveLength(1);
    const event = decode(docs[0]!);
    expect(event).toMatchObject({
      operation: 'playlist',
      credits: 7n,
      requestId: 'req-pl',
      successfulItems: 7,
      attemptedItems: 10,
      attributes: { playlist_id: 'PL1' },
    });
    expect(event.envelope).toMatchObject({
      eventId: docs[0]!._id,
      accountId: account._id,
      idempotencyKey: 'idem-1',
      occurredAt: '2026-03-15T10:00:00.000Z',
    });
    expect(docs[0]).toMatchObject({ key: account._id, topic: TOPIC, outbox_status: 'pending' });
    await t.stop();
  });

  it('releases a whole reservation and emits nothing; zero-amount reservations are no-ops', async () => {
    const t = await setup();
    const { account } = await t.accounts.createAccount({ tier: 'pro', credits: 6 });
    const r = await t.ledger.reserve({
      accountId: account._id,
      operation: 'summarize',
      amount: 6,
      requestId: 'a',
    });
    await r.release();
    await r.release();
    await r.commit(6);
    expect(await t.balance(account._id)).toBe(6);
    // Nothing charged: no balance to say.
    expect(r.remaining).toBeUndefined();
    const zero = await t.ledger.reserve({
      accountId: account._id,
      operation: 'extract',
      amount: 0,
      requestId: 'b',
    });
    await zero.commit(0);
    expect(await t.outbox.countDocuments({ outbox_status: 'pending' })).toBe(0);
    await expect(r.commit(7)).rejects.toThrow(RangeError);
    await t.stop();
  });

  it('answers 402 naming the required and available credits', async () => {
    const t = await setup();
    const { account } = await t.accounts.createAccount({ tier: 'pro', credits: 3 });
    const err = await rejection(
      t.ledger.reserve({ accountId: account._id, operation: 'summarize', amount: 6, requestId: 'x' }),
    );
    expect(err.code).toBe('INSUFFICIENT_CREDITS');
    expect(err.message).toContain('6');
    expect(err.message).toContain('3');
    expect(await t.balance(account._id)).toBe(3);
    expect(await t.outbox.countDocuments({})).toBe(0);
    await t.stop();
  });

  it('grants the monthly allowance once at the start of each UTC month, however many requests race', async () => {
    const t = await setup();
    const { account } = await t.accounts.createAccount({ tier: 'free' });
    expect(account.credits).toBe(50);
    const r = await t.ledger.reserve({
      accountId: account._id,
      operation: 'batch',
      amount: 50,
      requestId: 'a',
    });
    await r.commit(50);
    expect(await t.balance(account._id)).toBe(0);
    t.clock.set(Date.UTC(2026, 2, 31, 23, 59, 59));
    await expect(
      t.ledger.reserve({ accountId: account._id, operation: 'batch', amount: 1, requestId: 'b' }),
    ).rejects.toMatchObject({ code: 'INSUFFICIENT_CREDITS' });
    t.clock.set(Date.UTC(2026, 3, 1, 0, 0, 0));
    const rs = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        t.ledger.reserve({ accountId: account._id, operation: 'batch', amount: 1, requestId: `c${i}` }),
      ),
    );
    await Promise.all(rs.map((x) => x.release()));
    expect(await t.balance(account._id)).toBe(50);
    expect((await t.accounts.get(account._id))?.allowance_month).toBe('2026-04');
    await t.stop();
  });
});

describe('crash recovery', () => {
  it('settles a commit interrupted after the reservation was committed, exactly once', async () => {
    const t = await setup();
    const { account } = await t.accounts.createAccount({ tier: 'pro', credits: 10 });
    const r = await t.ledger.reserve({
      accountId: account._id,
      operation: 'batch',
      amount: 4,
      requestId: 'a',
    });
    // The crash: the reservation moved to committed (charged 1) but the account step never ran.
    const [doc] = await t.outbox.find({ account_id: account._id });
    await t.outbox.updateOne({ _id: doc!._id }, { $set: { state: 'committed', charged: 1 } });
    expect(await t.balance(account._id)).toBe(6);
    await t.ledger.recover();
    await t.ledger.recover();
    await r.commit(1); // the original caller's late commit changes nothing
    expect(await t.balance(account._id)).toBe(9);
    await t.stop();
  });

  it('releases reservations left open past their TTL; a late commit then charges nothing', async () => {
    const t = await setup();
    const { account } = await t.accounts.createAccount({ tier: 'pro', credits: 10 });
    const r = await t.ledger.reserve({
      accountId: account._id,
      operation: 'batch',
      amount: 4,
      requestId: 'a',
    });
    expect((await t.ledger.recover()).expired).toBe(0);
    t.clock.advance(16 * 60_000);
    expect((await t.ledger.recover()).expired).toBe(1);
    expect(await t.balance(account._id)).toBe(10);
    await r.commit(4);
    expect(await t.balance(account._id)).toBe(10);
    expect(await t.outbox.countDocuments({ outbox_status: 'pending' })).toBe(0);
    await t.stop();
  });
});

describe('stranded reservations and outbox history (items 7 and 9)', () => {
  it('a reservation stranded open is released after 15 minutes by default (past any request)', async () => {
    const t = await setup();
    const { account } = await t.accounts.createAccount({ tier: 'pro', credits: 10 });
    await t.ledger.reserve({ accountId: account._id, operation: 'batch', amount: 4, requestId: 'a' });
    expect(await t.balance(account._id)).toBe(6);
    // Still held while a synchronous transcription may wait (3 minutes) and long after.
    t.clock.advance(14 * 60_000);
    expect((await t.ledger.recover()).expired).toBe(0);
    t.clock.advance(60_000 + 1);
    expect((await t.ledger.recover()).expired).toBe(1);
    expect(await t.balance(account._id)).toBe(10);
    await t.stop();
  });

  it('prunes finished entries after 10 minutes; open reservations and pending events stay', async () => {
    const t = await setup();
    const { account } = await t.accounts.createAccount({ tier: 'pro', credits: 100 });
    const reserve = (requestId: string) =>
      t.ledger.reserve({ accountId: account._id, operation: 'batch', amount: 2, requestId });
    for (let i = 0; i < 3; i++) await (await reserve(`sent-${i}`)).commit(2);
    await t.relay.flush();
    await (await reserve('released')).release();
    await (await reserve('free')).commit(0);
    await reserve('open');
    // Committed after the last flush, and the relay is not running: its event stays pending.
    await (await reserve('pending')).commit(1);
    expect(await t.outbox.countDocuments({})).toBe(7);

    t.clock.advance(9 * 60_000);
    expect(await t.relay.prune()).toBe(0);
    t.clock.advance(60_000 + 1);
    expect(await t.relay.prune()).toBe(5);
    const left = (await t.outbox.find({})).map((d) => d.request_id).sort();
    expect(left).toEqual(['open', 'pending']);
    await t.stop();
  });
});

describe('outbox relay', () => {
  it('delivers every event exactly once from the outbox through a bus that fails, then recovers', async () => {
    const inner = createInProcessEventBus();
    let failuresLeft = 3;
    let publishCalls = 0;
    const flaky: EventBus = {
      ...inner,
      publish: async (topic: string, messages: readonly BusMessage[]) => {
        publishCalls += 1;
        if (failuresLeft > 0) {
          failuresLeft -= 1;
          throw new Error('broker unavailable');
        }
        return inner.publish(topic, messages);
      },
    };
    const received: DeliveredMessage[] = [];
    await inner.ensureTopics([TOPIC]);
    const sub = await inner.subscribe({
      groupId: 'billing-test',
      topics: [TOPIC],
      fromBeginning: true,
      handler: async (m) => {
        received.push(m);
      },
    });
    const t = await setup(flaky);
    const { account } = await t.accounts.createAccount({ tier: 'pro', credits: 100 });
    for (let i = 0; i < 7; i += 1) {
      const r = await t.ledger.reserve({
        accountId: account._id,
        operation: 'comments',
        amount: 2,
        requestId: `r${i}`,
      });
      await r.commit(i % 2 === 0 ? 2 : 1);
    }
    expect(await t.relay.flush()).toBe(0);
    expect(await t.relay.flush()).toBe(0);
    expect(await t.relay.flush()).toBe(0);
    expect(await t.outbox.countDocuments({ outbox_status: 'pending' })).toBe(7);
    expect(await t.relay.flush()).toBe(7);
    expect(await t.relay.flush()).toBe(0);
    expect(publishCalls).toBe(4);
    await waitFor(() => received.length >= 7, { message: '7 usage events' });
    const ids = received.map((m) => creditUsageV1.CreditUsage.decode(m.value).envelope!.eventId);
    expect(new Set(ids).size).toBe(7);
    expect(received.every((m) => m.key === account._id)).toBe(true);
    const total = received.reduce((n, m) => n + Number(creditUsageV1.CreditUsage.decode(m.value).credits), 0);
    expect(total).toBe(4 * 2 + 3 * 1);
    expect(await t.outbox.countDocuments({ outbox_status: 'sent' })).toBe(7);
    await sub.stop();
    await t.stop();
  });

  it('publishes on its own timer once started', async () => {
    const bus = createInProcessEventBus();
    const received: string[] = [];
    await bus.ensureTopics([TOPIC]);
    const sub = await bus.subscribe({
      groupId: 'g',
      topics: [TOPIC],
      fromBeginning: true,
      handler: async (m) => {
        received.push(m.key ?? '');
      },
    });
    const t = await setup(bus);
    t.relay.start();
    const { account } = await t.accounts.createAccount({ tier: 'pro', credits: 5 });
    const r = await t.ledger.reserve({
      accountId: account._id,
      operation: 'summarize',
      amount: 4,
      requestId: 'x',
    });
    await r.commit(4);
    await waitFor(() => received.length === 1, { message: 'relayed event' });
    await t.relay.stop();
    await sub.stop();
    await t.stop();
  });
});

describe('idempotency keys', () => {
  it('claims, reports in-progress, replays, refuses a different request, and frees an abandoned key', async () => {
    const kv = createInMemoryKeyValueStore();
    const idem = createIdempotencyStore({ kv });
    expect(await idem.claim('acct_1', 'k-1', 'fp-A')).toEqual({ kind: 'new' });
    expect(await idem.claim('acct_1', 'k-1', 'fp-A')).toEqual({ kind: 'in_progress' });
    // Keys are per account.
    expect(await idem.claim('acct_2', 'k-1', 'fp-A')).toEqual({ kind: 'new' });
    const response = { status: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' };
    await idem.complete('acct_1', 'k-1', response);
    expect(await idem.claim('acct_1', 'k-1', 'fp-A')).toEqual({ kind: 'replay', response });
    await expect(idem.claim('acct_1', 'k-1', 'fp-B')).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    await idem.abandon('acct_2', 'k-1');
    expect(await idem.claim('acct_2', 'k-1', 'fp-C')).toEqual({ kind: 'new' });
    await expect(idem.claim('acct_1', 'bad key\n', 'fp')).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    await expect(idem.claim('acct_1', 'x'.repeat(256), 'fp')).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
    });
    // Stored for 24 h.
    const ttl = await kv.ttlMs((await findIdemKey(kv))!);
    expect(ttl).toBeGreaterThan(23 * 3_600_000);
    expect(ttl).toBeLessThanOrEqual(24 * 3_600_000);
  });
});

async function findIdemKey(kv: ReturnType<typeof createInMemoryKeyValueStore>): Promise<string | null> {
  // The stored key name is a hash of the client key: recompute it the way the store does.
  const { createHash } = await import('node:crypto');
  const key = `idem:acct_1:${createHash('sha256').update('k-1').digest('base64url')}`;
  return (await kv.get(key)) === null ? null : key;
}

/**
 * CreditLedger.settleLeftover on the real ledger (in-memory store and key-value store): a
 * reservation its holder could not settle is charged exactly once for what was delivered, whether
 * its hold is still open, was committed already, or was returned by recovery meanwhile, however
 * often and however concurrently it is settled.
 */
import { describe, expect, it } from 'vitest';
import {
  ManualClock,
  createInMemoryDocumentStore,
  createInMemoryKeyValueStore,
  silentLogger,
} from '@subx/ports';
import { createAccountBalances } from './balances.ts';
import { OUTBOX_COLLECTION, createCreditLedger } from './credit-ledger.ts';
import type { ReservationDoc } from './credit-ledger.ts';
import { DEFAULT_PRICING } from './pricing.ts';

const ACCOUNT = 'acct_0123456789abcdef0123456789abcdef';
const TTL_MS = 60_000;

async function setup(credits: number) {
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
  const store = createInMemoryDocumentStore();
  const balances = createAccountBalances({ store, clock, pricing: DEFAULT_PRICING });
  await balances.collection.insertOne({
    _id: ACCOUNT,
    tier: 'pro',
    credits,
    allowance_month: '2026-06',
    updated_at: new Date(clock.now()).toISOString(),
    holds: {},
  });
  const ledger = createCreditLedger({
    store,
    kv: createInMemoryKeyValueStore(),
    clock,
    logger: silentLogger,
    accounts: balances,
    reservationTtlMs: TTL_MS,
  });
  await ledger.init();
  const balance = async () => (await balances.collection.findOne({ _id: ACCOUNT }))!;
  const charges = async () =>
    (await store.collection<ReservationDoc>(OUTBOX_COLLECTION).find({ state: 'committed' }))
      .map((d) => d.charged)
      .filter((c) => c > 0);
  const reserve = (amount: number) =>
    ledger.reserve({ accountId: ACCOUNT, operation: 'jobs', amount, requestId: 'req-job' });
  const leftover = (reservationId: string, credits: number) => ({
    reservationId,
    accountId: ACCOUNT,
    operation: 'jobs' as const,
    requestId: 'req-job',
    credits,
    usage: { successfulItems: credits, attemptedItems: 5 },
  });
  return { clock, ledger, balance, charges, reserve, leftover };
}

describe('settling a reservation its holder left', () => {
  it('an open hold is committed for what was delivered, once, however often it is settled', async () => {
    const t = await setup(100);
    const held = await t.reserve(5);
    expect((await t.balance()).credits).toBe(95);
    const outcomes = await Promise.all([
      t.ledger.settleLeftover(t.leftover(held.id!, 3)),
      t.ledger.settleLeftover(t.leftover(held.id!, 3)),
      t.ledger.settleLeftover(t.leftover(held.id!, 3)),
    ]);
    expect(outcomes.filter((o) => o === 'settled')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'committed')).toHaveLength(2);
    expect(await t.ledger.settleLeftover(t.leftover(held.id!, 3))).toBe('committed');
    expect((await t.balance()).credits).toBe(97);
    expect((await t.balance()).holds).toEqual({});
    expect(await t.charges()).toEqual([3]);
    // The holder coming back late commits nothing more.
    await held.commit(5);
    expect((await t.balance()).credits).toBe(97);
  });

  it('a hold committed by its holder before it died is not charged again', async () => {
    const t = await setup(100);
    const held = await t.reserve(5);
    await held.commit(4);
    expect(await t.ledger.settleLeftover(t.leftover(held.id!, 4))).toBe('committed');
    expect((await t.balance()).credits).toBe(96);
    expect(await t.charges()).toEqual([4]);
  });

  it('a hold recovery returned is charged afresh, once; a short balance leaves it unpaid', async () => {
    const t = await setup(100);
    const held = await t.reserve(5);
    t.clock.advance(TTL_MS + 1);
    expect(await t.ledger.recover()).toEqual({ settled: 0, expired: 1 });
    expect((await t.balance()).credits).toBe(100);
    const outcomes = await Promise.all([
      t.ledger.settleLeftover(t.leftover(held.id!, 2)),
      t.ledger.settleLeftover(t.leftover(held.id!, 2)),
    ]);
    expect(outcomes).toEqual(['made_up', 'made_up']);
    expect(await t.ledger.settleLeftover(t.leftover(held.id!, 2))).toBe('made_up');
    expect((await t.balance()).credits).toBe(98);
    expect(await t.charges()).toEqual([2]);

    const poor = await setup(5);
    const gone = await poor.reserve(5);
    poor.clock.advance(TTL_MS + 1);
    await poor.ledger.recover();
    await poor.reserve(4); // the balance is spent elsewhere meanwhile
    expect(await poor.ledger.settleLeftover(poor.leftover(gone.id!, 3))).toBe('unpaid');
    expect((await poor.balance()).credits).toBe(1);
  });

  it('nothing delivered: the hold is returned whole', async () => {
    const t = await setup(10);
    const held = await t.reserve(6);
    expect(await t.ledger.settleLeftover(t.leftover(held.id!, 0))).toBe('settled');
    expect((await t.balance()).credits).toBe(10);
    expect(await t.charges()).toEqual([]);
  });
});

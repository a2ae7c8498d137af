/**
 * A deleted workspace in billing (accounts.v1 → pseudonyms.ts): after its AccountDeleted no ledger
 * entry, daily aggregate or request count carries its id, and every total is what it was; the
 * event may come twice; usage still in flight lands under the same pseudonym for the grace period,
 * under a fresh one after it, never under the id; then nothing links the id to its pseudonym.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TOPICS, accountDeletedV1 } from '@subx/contracts';
import { ManualClock, createInMemoryDocumentStore, createInProcessEventBus, silentLogger } from '@subx/ports';
import type { Doc, DocumentStore, InProcessEventBus, Subscription } from '@subx/ports';
import { requestReport, usageEvent } from '../../test/ledger-support.ts';
import { DELETED_ACCOUNTS_COLLECTION, createAccountPseudonyms } from './pseudonyms.ts';
import type { AccountPseudonyms } from './pseudonyms.ts';
import { REQUEST_COUNTS_COLLECTION, createRequestCounts } from './request-counts.ts';
import type { RequestCounts } from './request-counts.ts';
import { startAccountDeletionConsumer } from './usage-consumer.ts';
import { createUsageLedger } from './usage-ledger.ts';
import type { UsageLedger } from './usage-ledger.ts';

const DELETED = 'acct_0000000000000000000000000000dead';
const KEPT = 'acct_00000000000000000000000000000a11';
const COLLECTIONS = ['usage_ledger', 'usage_daily', REQUEST_COUNTS_COLLECTION, DELETED_ACCOUNTS_COLLECTION];

const deletedEvent = (accountId: string, eventId: string = randomUUID()) =>
  accountDeletedV1.AccountDeleted.encode({
    envelope: {
      eventId,
      occurredAt: '2026-03-12T09:00:00.000Z',
      accountId,
      idempotencyKey: eventId,
      traceParent: '',
    },
    requestedAt: '2026-03-12T08:59:58.000Z',
  }).finish();

describe('a deleted workspace in the ledger', () => {
  let bus: InProcessEventBus;
  let clock: ManualClock;
  let store: DocumentStore;
  let pseudonyms: AccountPseudonyms;
  let ledger: UsageLedger;
  let requests: RequestCounts;
  const subs: Subscription[] = [];

  beforeEach(async () => {
    bus = createInProcessEventBus({ retryBackoff: { initialMs: 5, maxMs: 20 } });
    clock = new ManualClock(Date.UTC(2026, 2, 12, 9));
    store = createInMemoryDocumentStore();
    pseudonyms = await createAccountPseudonyms(store, clock);
    const accountOf = (id: string) => pseudonyms.accountOf(id);
    ledger = await createUsageLedger(store, clock, { accountOf });
    requests = await createRequestCounts(store, clock, accountOf);
    subs.push(await startAccountDeletionConsumer({ bus, pseudonyms, logger: silentLogger }));
  });
  afterEach(async () => {
    await Promise.all(subs.splice(0).map((s) => s.stop()));
    await bus.close();
  });

  /** Every document of billing's collections, as text. */
  async function everything(): Promise<string> {
    const all: Doc[] = [];
    for (const name of COLLECTIONS) all.push(...(await store.collection(name).find({})));
    return JSON.stringify(all);
  }

  /** Credits and requests over every account: what must not change. */
  async function totals() {
    const entries = await store.collection<Doc & { credits: number }>('usage_ledger').find({});
    const daily = await store.collection<Doc & { credits: number; requests: number }>('usage_daily').find({});
    const counted = await store
      .collection<Doc & { src: Record<string, { ops: Record<string, number> }> }>(REQUEST_COUNTS_COLLECTION)
      .find({});
    return {
      ledger: entries.reduce((sum, e) => sum + e.credits, 0),
      entries: entries.length,
      dailyCredits: daily.reduce((sum, d) => sum + d.credits, 0),
      dailyCharges: daily.reduce((sum, d) => sum + d.requests, 0),
      requests: counted
        .flatMap((d) => Object.values(d.src).flatMap((tally) => Object.values(tally.ops)))
        .reduce((sum, n) => sum + n, 0),
    };
  }

  async function deleteWorkspace(accountId: string, eventId?: string) {
    await bus.publish(TOPICS.accountEvents.default, [
      { key: accountId, value: deletedEvent(accountId, eventId) },
    ]);
  }

  async function seed() {
    const events = [
      usageEvent({ accountId: DELETED, credits: 2, occurredAt: '2026-03-10T12:00:00.000Z' }),
      usageEvent({
        accountId: DELETED,
        credits: 5,
        operation: 'summarize',
        occurredAt: '2026-03-10T13:00:00.000Z',
      }),
      usageEvent({ accountId: DELETED, credits: 3, occurredAt: '2026-03-11T08:00:00.000Z' }),
      usageEvent({ accountId: KEPT, credits: 7, occurredAt: '2026-03-10T12:00:00.000Z' }),
    ];
    for (const event of events) await ledger.record(event);
    const source = '00000000-0000-4000-8000-0000000000a1';
    await requests.apply(
      requestReport({ accountId: DELETED, date: '2026-03-10', source, sequence: 4, ops: { extract: 9 } }),
    );
    await requests.apply(
      requestReport({ accountId: DELETED, date: '2026-03-11', source, sequence: 1, ops: { batch: 2 } }),
    );
    await requests.apply(
      requestReport({ accountId: KEPT, date: '2026-03-10', sequence: 1, ops: { extract: 4 } }),
    );
    return { events, source };
  }

  it('after AccountDeleted no record carries its id, and every total is unchanged', async () => {
    const { events } = await seed();
    const before = await totals();
    const usageBefore = await ledger.usage(DELETED, '2026-03-01', '2026-03-31');
    const keptBefore = await ledger.usage(KEPT, '2026-03-01', '2026-03-31');
    expect(usageBefore.totalCredits).toBe(10);

    await deleteWorkspace(DELETED);
    await expect.poll(async () => (await everything()).includes(DELETED), { timeout: 5_000 }).toBe(false);
    expect(await totals()).toEqual(before);
    expect((await ledger.usage(DELETED, '2026-03-01', '2026-03-31')).days).toEqual([]);
    expect(await ledger.usage(KEPT, '2026-03-01', '2026-03-31')).toEqual(keptBefore);

    // One pseudonym for the whole workspace: its days add up as the account's did.
    const moved = await store
      .collection<Doc & { account_id: string }>('usage_ledger')
      .find({ _id: { $in: events.slice(0, 3).map((e) => e.envelope!.eventId) } });
    const names = new Set(moved.map((e) => e.account_id));
    expect(names.size).toBe(1);
    const [pseudonym] = [...names];
    expect(pseudonym).toMatch(/^anon_[0-9a-f]{32}$/);
    const underPseudonym = await ledger.usage(pseudonym!, '2026-03-01', '2026-03-31');
    expect({ ...underPseudonym, accountId: DELETED }).toEqual(usageBefore);
    const days = await requests.days(pseudonym!, '2026-03-01', '2026-03-31');
    expect(Object.fromEntries([...days].map(([day, ops]) => [day, Object.fromEntries(ops)]))).toEqual({
      '2026-03-10': { extract: 9 },
      '2026-03-11': { batch: 2 },
    });

    // The event again (a redelivery, a second deletion call): nothing moves.
    await deleteWorkspace(DELETED);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await totals()).toEqual(before);
  });

  it('usage in flight lands under the same pseudonym; after the grace period the link is gone', async () => {
    const { source } = await seed();
    await deleteWorkspace(DELETED);
    await expect.poll(async () => (await everything()).includes(DELETED), { timeout: 5_000 }).toBe(false);
    const pseudonym = await pseudonyms.accountOf(DELETED);

    // An outbox entry published after the deletion, and the tally reported again.
    await ledger.record(
      usageEvent({ accountId: DELETED, credits: 4, occurredAt: '2026-03-11T09:00:00.000Z' }),
    );
    await requests.apply(
      requestReport({ accountId: DELETED, date: '2026-03-11', source, sequence: 2, ops: { batch: 3 } }),
    );
    expect((await ledger.usage(pseudonym, '2026-03-11', '2026-03-11')).totalCredits).toBe(7);
    const day = await requests.days(pseudonym, '2026-03-11', '2026-03-11');
    expect(day.get('2026-03-11')?.get('batch')).toBe(3);
    expect((await everything()).includes(DELETED)).toBe(false);

    clock.advance(61 * 60_000);
    expect(await pseudonyms.sweep()).toBe(1);
    expect((await everything()).includes(pseudonym)).toBe(true);
    const tombstones = await store.collection(DELETED_ACCOUNTS_COLLECTION).find({});
    expect(JSON.stringify(tombstones).includes(pseudonym)).toBe(false);
    // Later still: a fresh pseudonym of its own, never the id.
    const late = usageEvent({ accountId: DELETED, credits: 1, occurredAt: '2026-03-12T08:00:00.000Z' });
    await ledger.record(late);
    const entry = await store
      .collection<Doc & { account_id: string }>('usage_ledger')
      .findOne({ _id: late.envelope!.eventId });
    expect(entry?.account_id).toMatch(/^anon_/);
    expect(entry?.account_id).not.toBe(pseudonym);
    expect((await everything()).includes(DELETED)).toBe(false);
  });
});

/**
 * The audit log on the embedded adapters: what `record` stores, the pages of `list`, the outbox
 * publishing each event once on the in-process bus as a CloudEvent, the bounded retention sweep,
 * and a store that fails or hangs never failing the caller.
 */
import { describe, expect, it } from 'vitest';
import { auditEventV1 } from '@subx/contracts';
import { isAppError } from '@subx/errors';
import { createInMemoryDocumentStore, createInProcessEventBus, ManualClock, silentLogger } from '@subx/ports';
import type { DeliveredMessage, DocumentStore, Logger } from '@subx/ports';
import { scrape } from '@subx/service-kit';
import { AUDIT_EVENTS_COLLECTION, createAuditLog } from './audit-log.ts';
import type { AuditLogOptions } from './audit-log.ts';
import type { AuditInput } from '../domain/audit-log.ts';

const START = Date.UTC(2026, 2, 15, 10, 0, 0);
const DAY = 86_400_000;

async function metric(name: string): Promise<number> {
  const line = (await scrape()).split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

function setup(options: Partial<AuditLogOptions> = {}) {
  const clock = new ManualClock(START);
  const store = options.store ?? createInMemoryDocumentStore();
  const bus = options.bus ?? createInProcessEventBus();
  const audit = createAuditLog({ store, bus, clock, logger: silentLogger, ...options });
  return { clock, store, bus, audit };
}

const keyCreated = (accountId: string, n: number): AuditInput => ({
  accountId,
  action: 'key.created',
  actor: { type: 'key', id: 'key_primary' },
  target: { type: 'key', id: `key_${n}` },
  sourceIp: '203.0.113.7',
  details: { name: `ci ${n}`, scopes: ['transcripts:read', 'jobs'] },
});

describe('audit log: record and list', () => {
  it('stores each event with its actor, target, address and details, and lists it', async () => {
    const { audit } = setup();
    await audit.record(keyCreated('acct_a', 1));
    await audit.record({
      accountId: 'acct_a',
      action: 'sign_in.failed',
      actor: { type: 'member', id: null },
    });
    const page = await audit.list('acct_a');
    expect(page.next_cursor).toBeNull();
    expect(page.events).toHaveLength(2);
    const [signIn, key] = page.events;
    expect(key).toEqual({
      id: expect.stringMatching(/^aud_[0-9a-f]{24}$/),
      at: new Date(START).toISOString(),
      account_id: 'acct_a',
      action: 'key.created',
      actor: { type: 'key', id: 'key_primary' },
      target: { type: 'key', id: 'key_1' },
      source_ip: '203.0.113.7',
      details: { name: 'ci 1', scopes: ['transcripts:read', 'jobs'] },
    });
    expect(signIn).toMatchObject({
      action: 'sign_in.failed',
      actor: { type: 'member', id: null },
      target: null,
      source_ip: null,
      details: {},
    });
    expect(signIn!.id).not.toBe(key!.id);
  });

  it('pages newest first with a cursor, and never shows another account’s events', async () => {
    const { audit, clock } = setup();
    for (let n = 0; n < 7; n += 1) {
      await audit.record(keyCreated('acct_a', n));
      await audit.record(keyCreated('acct_b', n));
      // Events of the same millisecond keep the order they were recorded in.
      if (n % 2 === 0) clock.advance(1_000);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await audit.list('acct_a', { limit: 3, cursor });
      pages += 1;
      expect(page.events.length).toBeLessThanOrEqual(3);
      for (const event of page.events) {
        expect(event.account_id).toBe('acct_a');
        seen.push(event.target!.id);
      }
      cursor = page.next_cursor;
    } while (cursor !== null && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(7);
    expect(new Set(seen).size).toBe(7);
    // Newest first: the times never go up along the pages.
    const all = (await audit.list('acct_a', { limit: 200 })).events;
    expect(all.map((e) => e.target!.id)).toEqual(seen);
    const times = all.map((e) => Date.parse(e.at));
    expect([...times].sort((x, y) => y - x)).toEqual(times);
    expect(all[0]!.target!.id).toBe('key_6');
    expect((await audit.list('acct_nobody')).events).toEqual([]);
  });

  it('keeps limit within 1..200 and refuses a cursor it did not write', async () => {
    const { audit } = setup();
    for (let n = 0; n < 3; n += 1) await audit.record(keyCreated('acct_a', n));
    expect((await audit.list('acct_a', { limit: 0 })).events).toHaveLength(1);
    expect((await audit.list('acct_a', { limit: 10_000 })).events).toHaveLength(3);
    for (const cursor of ['nonsense', Buffer.from('000000000000001:key_1').toString('base64url')]) {
      const err = await audit.list('acct_a', { cursor }).catch((e: unknown) => e);
      expect(isAppError(err) && err.code).toBe('INVALID_REQUEST');
    }
  });
});

describe('audit log: the audit.v1 outbox', () => {
  it('publishes every event once, keyed by account, as a CloudEvent carrying the protobuf AuditEvent', async () => {
    const { audit, bus, store } = setup();
    const received: DeliveredMessage[] = [];
    await bus.subscribe({
      groupId: 'audit-reader',
      topics: ['audit.v1'],
      fromBeginning: true,
      handler: async (m) => void received.push(m),
    });
    await audit.start();
    try {
      await audit.record(keyCreated('acct_a', 1));
      await audit.record(keyCreated('acct_b', 2));
      await audit.relay.flush();
      // Nothing is left to publish: a second pass and the stop's last flush send nothing again.
      expect(await audit.relay.flush()).toBe(0);
    } finally {
      await audit.stop();
    }
    await expect.poll(() => received.length).toBe(2);
    const listed = [...(await audit.list('acct_a')).events, ...(await audit.list('acct_b')).events];
    // One message per event (the partitions may deliver them in any order).
    expect(received.map((m) => m.headers.ce_id).sort()).toEqual(listed.map((e) => e.id).sort());
    for (const message of received) {
      const event = listed.find((e) => e.id === message.headers.ce_id)!;
      expect(message.key).toBe(event.account_id);
      expect(message.headers).toMatchObject({
        ce_specversion: '1.0',
        ce_id: event.id,
        ce_source: '//subx/gateway',
        ce_type: 'com.subx.audit.v1',
        ce_time: event.at,
        ce_subject: event.account_id,
        ce_dataschema: 'proto:subx.events.v1.AuditEvent',
        'content-type': 'application/protobuf',
        'x-event-id': event.id,
      });
      const decoded = auditEventV1.AuditEvent.decode(message.value);
      expect(decoded).toMatchObject({
        envelope: { eventId: event.id, occurredAt: event.at, accountId: event.account_id },
        action: 'key.created',
        actor: { type: 'key', id: 'key_primary' },
        target: event.target,
        sourceIp: '203.0.113.7',
      });
      expect(JSON.parse(decoded.detailsJson)).toEqual(event.details);
    }
    const docs = await store.collection(AUDIT_EVENTS_COLLECTION).find({});
    expect(docs.map((d) => d.outbox_status)).toEqual(['sent', 'sent']);
  });
});

describe('audit log: retention', () => {
  it('sweeps published events past the retention, a bounded number per run, never a pending one', async () => {
    const { audit, clock, store } = setup({ retentionDays: 30, sweepMaxPerRun: 2 });
    await audit.relay.init();
    for (let n = 0; n < 5; n += 1) await audit.record(keyCreated('acct_a', n));
    await audit.relay.flush();
    // Not yet published when the retention passes: still owed to the topic, so kept.
    await audit.record(keyCreated('acct_a', 99));
    clock.advance(30 * DAY + 1);
    await audit.record(keyCreated('acct_a', 100));
    const before = await metric('subx_audit_events_swept_total');

    expect(await audit.sweep()).toBe(2);
    expect(await audit.sweep()).toBe(2);
    expect(await audit.sweep()).toBe(1);
    expect(await audit.sweep()).toBe(0);
    expect((await metric('subx_audit_events_swept_total')) - before).toBe(5);
    const left = (await audit.list('acct_a')).events.map((e) => e.target!.id);
    expect(left).toEqual(['key_100', 'key_99']);
    expect(await store.collection(AUDIT_EVENTS_COLLECTION).countDocuments({})).toBe(2);
  });
});

describe('audit log: a failing store', () => {
  function storeWhoseInsert(insertOne: () => Promise<void>): DocumentStore {
    const real = createInMemoryDocumentStore();
    return {
      ...real,
      collection: (name) => ({ ...real.collection(name), insertOne }),
    } as DocumentStore;
  }

  function recordingLogger(): Logger & { errors: Record<string, unknown>[] } {
    const errors: Record<string, unknown>[] = [];
    const logger = {
      ...silentLogger,
      errors,
      error: (obj: unknown) => void errors.push(obj as Record<string, unknown>),
      child: () => logger,
    };
    return logger as Logger & { errors: Record<string, unknown>[] };
  }

  it('never throws: the failure is logged with the action and the account, and counted', async () => {
    const logger = recordingLogger();
    const { audit } = setup({
      logger,
      store: storeWhoseInsert(() => Promise.reject(new Error('disk full'))),
    });
    const before = await metric('subx_audit_write_failures_total');
    await expect(audit.record(keyCreated('acct_a', 1))).resolves.toBeUndefined();
    expect((await metric('subx_audit_write_failures_total')) - before).toBe(1);
    expect(logger.errors).toHaveLength(1);
    expect(logger.errors[0]).toMatchObject({ action: 'key.created', account_id: 'acct_a' });
  });

  it('bounds the wait on a store that does not answer', async () => {
    const logger = recordingLogger();
    const { audit } = setup({
      logger,
      writeTimeoutMs: 20,
      store: storeWhoseInsert(() => new Promise<void>(() => {})),
    });
    const before = await metric('subx_audit_write_failures_total');
    const started = performance.now();
    await audit.record(keyCreated('acct_a', 1));
    expect(performance.now() - started).toBeLessThan(2_000);
    expect((await metric('subx_audit_write_failures_total')) - before).toBe(1);
    expect(logger.errors[0]).toMatchObject({ action: 'key.created', account_id: 'acct_a' });
  });
});

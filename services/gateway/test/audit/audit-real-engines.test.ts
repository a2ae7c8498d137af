/**
 * The audit log on the real engines: events stored in the MongoDB-compatible server reach a real
 * Kafka topic as CloudEvents (binary mode, keyed by account, the protobuf AuditEvent as value),
 * each exactly once, also across a restart of the log; the pages and the bounded retention sweep
 * work on the server's own sort, `$lt` and `$in`.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, expect, it } from 'vitest';
import { auditEventV1 } from '@subx/contracts';
import { createKafkaEventBus, createMongoDocumentStore, ManualClock, silentLogger } from '@subx/ports';
import type { DeliveredMessage, KafkaEventBus } from '@subx/ports';
import { FAST_KAFKA_TIMINGS, brokerList, describeWithEngine } from '@subx/testing/engines';
import { createAuditLog } from '../../src/audit/audit-log.ts';
import type { AuditInput } from '../../src/domain/audit-log.ts';

const DAY = 86_400_000;

const rotated = (accountId: string, n: number): AuditInput => ({
  accountId,
  action: 'webhook_secret.rotated',
  actor: { type: 'key', id: `key_${n}` },
  target: { type: 'webhook_secret', id: accountId },
  sourceIp: '198.51.100.9',
  details: { n },
});

describeWithEngine('kafka', 'the audit log on a real broker', (brokers) => {
  describeWithEngine('mongo', 'and the MongoDB-compatible server', (mongoUrl) => {
    const dbName = `audit_it_${randomUUID().slice(0, 8)}`;
    const stores: ReturnType<typeof createMongoDocumentStore>[] = [];
    const buses: KafkaEventBus[] = [];
    const openStore = () => {
      const store = createMongoDocumentStore({ url: mongoUrl, dbName });
      stores.push(store);
      return store;
    };
    const openBus = (clientId: string) => {
      const bus = createKafkaEventBus({ brokers: brokerList(brokers), clientId, ...FAST_KAFKA_TIMINGS });
      buses.push(bus);
      return bus;
    };
    afterAll(async () => {
      await Promise.all(buses.map((b) => b.close()));
      await stores[0]?.dropDatabase().catch(() => undefined);
      await Promise.all(stores.map((s) => s.close()));
    });

    it('publishes every event once as a CloudEvent on its topic, keyed by account, also across a restart', async () => {
      const topic = `t.audit.${randomUUID()}`;
      const clock = { now: () => Date.now() };
      const producer = openBus('audit-producer');
      await producer.ensureTopics([topic]);
      const received: DeliveredMessage[] = [];
      const reader = openBus('audit-reader');
      const subscription = await reader.subscribe({
        groupId: `audit-reader-${randomUUID()}`,
        topics: [topic],
        fromBeginning: true,
        handler: async (m) => void received.push(m),
      });
      const store = openStore();
      const first = createAuditLog({
        store,
        bus: producer,
        clock,
        logger: silentLogger,
        topic,
        outboxIntervalMs: 50,
      });
      await first.start();
      const accounts = [`acct_${randomUUID()}`, `acct_${randomUUID()}`];
      for (let n = 0; n < 6; n += 1) await first.record(rotated(accounts[n % 2]!, n));
      await first.stop();
      // A second gateway process on the same store: nothing is left pending, nothing goes out twice.
      const second = createAuditLog({
        store: openStore(),
        bus: producer,
        clock,
        logger: silentLogger,
        topic,
        outboxIntervalMs: 50,
      });
      await second.start();
      await second.record(rotated(accounts[0]!, 6));
      await second.stop();

      await expect.poll(() => received.length, { timeout: 30_000, interval: 100 }).toBeGreaterThanOrEqual(7);
      // Late duplicates would arrive within a few fetches.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await subscription.stop();
      const ids = received.map((m) => m.headers.ce_id);
      expect(new Set(ids).size).toBe(7);
      expect(received).toHaveLength(7);

      const listed = [
        ...(await second.list(accounts[0]!, { limit: 200 })).events,
        ...(await second.list(accounts[1]!, { limit: 200 })).events,
      ];
      expect(listed.map((e) => e.id).sort()).toEqual([...ids].sort());
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
          envelope: { eventId: event.id, accountId: event.account_id, occurredAt: event.at },
          action: 'webhook_secret.rotated',
          actor: { type: 'key', id: event.actor.id },
          target: { type: 'webhook_secret', id: event.account_id },
          sourceIp: '198.51.100.9',
        });
        expect(JSON.parse(decoded.detailsJson)).toEqual(event.details);
      }
    });

    it('pages newest first and sweeps past the retention in bounded runs on the real server', async () => {
      const clock = new ManualClock(Date.UTC(2026, 2, 15, 10));
      const bus = openBus('audit-sweep');
      const topic = `t.audit.${randomUUID()}`;
      await bus.ensureTopics([topic]);
      const audit = createAuditLog({
        store: openStore(),
        bus,
        clock,
        logger: silentLogger,
        topic,
        retentionDays: 7,
        sweepMaxPerRun: 3,
      });
      await audit.relay.init();
      const account = `acct_${randomUUID()}`;
      for (let n = 0; n < 5; n += 1) {
        await audit.record(rotated(account, n));
        clock.advance(1);
      }
      expect(await audit.relay.flush()).toBe(5);
      clock.advance(7 * DAY + 1);
      await audit.record(rotated(account, 5));

      const seen: number[] = [];
      let cursor: string | null = null;
      for (let page = 0; page < 5; page += 1) {
        const result = await audit.list(account, { limit: 2, cursor });
        seen.push(...result.events.map((e) => Number(e.details.n)));
        cursor = result.next_cursor;
        if (cursor === null) break;
      }
      expect(seen).toEqual([5, 4, 3, 2, 1, 0]);

      expect(await audit.sweep()).toBe(3);
      expect(await audit.sweep()).toBe(2);
      expect(await audit.sweep()).toBe(0);
      // The recent one stays (and is still owed to the topic).
      expect((await audit.list(account)).events.map((e) => e.details.n)).toEqual([5]);
    });
  });
});

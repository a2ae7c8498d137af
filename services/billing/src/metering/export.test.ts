import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { CLOUD_EVENT_KINDS, cloudEventHeaders, creditUsageV1 } from '@subx/contracts';
import { createInProcessEventBus, dlqTopic } from '@subx/ports';
import type { BusMessage, CrashableSubscription, DeliveredMessage, Subscription } from '@subx/ports';
import type { MeteringEvent } from './export.ts';
import { startMeteringExport } from './export.ts';

const TOPIC = 'billing.credit-usage.v1';
const silent = { warn: () => {} };

/** A credit-usage event as the gateway's relay publishes it: protobuf payload, CloudEvents headers. */
function usage(account: string, credits: number): BusMessage & { id: string } {
  const id = randomUUID();
  const occurredAt = new Date(Date.UTC(2026, 2, 15, 10)).toISOString();
  const value = creditUsageV1.CreditUsage.encode({
    envelope: { eventId: id, occurredAt, accountId: account, idempotencyKey: '', traceParent: '' },
    operation: 'batch',
    credits: BigInt(credits),
    requestId: `req-${id}`,
    successfulItems: credits,
    attemptedItems: credits,
    attributes: {},
  }).finish();
  const headers = cloudEventHeaders(CLOUD_EVENT_KINDS.creditUsage, {
    id,
    time: occurredAt,
    subject: account,
  });
  return { id, key: account, value, headers };
}

/** A local CloudEvents batch ingest: records every request; answers as `answer` says. */
async function receiver(answer: (n: number) => number | 'hold' = () => 204) {
  const requests: { contentType: string; authorization: string; events: MeteringEvent[] }[] = [];
  const held: (() => void)[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({
        contentType: req.headers['content-type'] ?? '',
        authorization: req.headers.authorization ?? '',
        events: JSON.parse(Buffer.concat(chunks).toString('utf8')) as MeteringEvent[],
      });
      const status = answer(requests.length);
      if (status === 'hold') held.push(() => res.writeHead(204).end());
      else res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/events`;
  const ids = () => requests.flatMap((r) => r.events.map((e) => e.id));
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  cleanups.push(close);
  return { url, requests, ids, held, close };
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

describe('metering export', () => {
  it('forwards every event in batches of structured CloudEvents with the usage as JSON', async () => {
    const bus = createInProcessEventBus();
    const ingest = await receiver();
    const events = Array.from({ length: 25 }, (_, i) => usage(`acct-${i % 3}`, i + 1));
    await bus.publish(TOPIC, events);
    const sub = await startMeteringExport({
      bus,
      url: ingest.url,
      token: 'tok-1',
      topic: TOPIC,
      groupId: 'metering',
      batchSize: 10,
      lingerMs: 20,
      logger: silent,
    });
    cleanups.push(() => sub.stop());
    await expect.poll(() => ingest.ids().length).toBe(25);
    expect(new Set(ingest.ids())).toEqual(new Set(events.map((e) => e.id)));
    expect(ingest.requests.length).toBeLessThan(25);
    expect(Math.max(...ingest.requests.map((r) => r.events.length))).toBeLessThanOrEqual(10);
    expect(ingest.requests[0]).toMatchObject({
      contentType: 'application/cloudevents-batch+json',
      authorization: 'Bearer tok-1',
    });
    const first = ingest.requests.flatMap((r) => r.events).find((e) => e.id === events[0]!.id);
    expect(first).toEqual({
      specversion: '1.0',
      id: events[0]!.id,
      source: '//subx/gateway',
      type: 'com.subx.credit-usage.v1',
      subject: 'acct-0',
      time: '2026-03-15T10:00:00.000Z',
      datacontenttype: 'application/json',
      data: {
        operation: 'batch',
        credits: 1,
        request_id: `req-${events[0]!.id}`,
        successful_items: 1,
        attempted_items: 1,
      },
    });
    await bus.close();
  });

  it('across a crash and restart, re-sends what was not accepted with the same ids: each event once by id', async () => {
    const bus = createInProcessEventBus();
    // The first request reaches the ingest but its answer never comes back before the crash.
    const ingest = await receiver((n) => (n === 1 ? 'hold' : 204));
    const events = Array.from({ length: 12 }, (_, i) => usage('acct-r', i + 1));
    await bus.publish(TOPIC, events);
    const options = {
      bus,
      url: ingest.url,
      topic: TOPIC,
      groupId: 'metering-r',
      batchSize: 5,
      lingerMs: 20,
      logger: silent,
    };
    const first = (await startMeteringExport(options)) as CrashableSubscription;
    await expect.poll(() => ingest.requests.length).toBeGreaterThanOrEqual(1);
    const unanswered = ingest.requests[0]!.events.map((e) => e.id);
    await first.crash();
    const second: Subscription = await startMeteringExport(options);
    cleanups.push(() => second.stop());
    await expect.poll(() => new Set(ingest.ids()).size).toBe(12);
    expect(new Set(ingest.ids())).toEqual(new Set(events.map((e) => e.id)));
    // The unanswered batch came again, under the same ids (the receiver dedupes on them).
    for (const id of unanswered)
      expect(ingest.ids().filter((x) => x === id).length).toBeGreaterThanOrEqual(2);
    for (const release of ingest.held) release();
    await bus.close();
  });

  it('backs off and retries while the ingest fails or throttles, then delivers', async () => {
    const bus = createInProcessEventBus({ retryBackoff: { initialMs: 20, maxMs: 200 } });
    const ingest = await receiver((n) => (n === 1 ? 503 : n === 2 ? 429 : 200));
    const events = [usage('acct-b', 3), usage('acct-b', 4)];
    await bus.publish(TOPIC, events);
    const sub = await startMeteringExport({
      bus,
      url: ingest.url,
      topic: TOPIC,
      groupId: 'metering-b',
      batchSize: 10,
      lingerMs: 20,
      logger: silent,
    });
    cleanups.push(() => sub.stop());
    await expect.poll(() => ingest.requests.length).toBeGreaterThanOrEqual(3);
    await expect.poll(() => new Set(ingest.ids())).toEqual(new Set(events.map((e) => e.id)));
    await bus.close();
  });

  it('dead-letters what the ingest refuses for good, counted for metrics, and moves on', async () => {
    const deadLettered: string[] = [];
    const bus = createInProcessEventBus({
      observer: { deadLettered: (_topic, group) => deadLettered.push(group) },
    });
    const ingest = await receiver((n) => (n === 1 ? 400 : 204));
    const dead: DeliveredMessage[] = [];
    await bus.subscribe({
      groupId: 'dlq-reader',
      topics: [dlqTopic(TOPIC)],
      fromBeginning: true,
      handler: async (m) => void dead.push(m),
    });
    const refused = usage('acct-d', 1);
    await bus.publish(TOPIC, [refused]);
    const sub = await startMeteringExport({
      bus,
      url: ingest.url,
      topic: TOPIC,
      groupId: 'metering-d',
      batchSize: 10,
      lingerMs: 10,
      logger: silent,
    });
    cleanups.push(() => sub.stop());
    await expect.poll(() => dead.length).toBe(1);
    expect(dead[0]!.headers['x-error-message']).toContain('metering ingest refused the events: 400');
    expect(dead[0]!.headers.ce_id).toBe(refused.id);
    expect(deadLettered).toEqual(['metering-d']);
    const later = usage('acct-d', 2);
    await bus.publish(TOPIC, [later]);
    await expect.poll(() => ingest.ids()).toContain(later.id);
    await bus.close();
  });
});

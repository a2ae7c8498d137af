/**
 * On a real broker: a group member that crashes (SIGKILL: it never says
 * goodbye) and is replaced at once must not leave the group stalled for about a minute, and the
 * rebalance that follows is routine, not an error in the logs. Uses the adapter's DEFAULT group
 * timings (that is what is under test), its own topic and group on the shared broker.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { brokerList, describeWithEngine } from '@subx/testing/engines';
import { createKafkaEventBus, isRoutineRebalance, isTransient } from '../src/event-bus/kafka.ts';
import type { Logger } from '../src/logger.ts';
import type { EventBus } from '../src/event-bus/port.ts';

const fixture = fileURLToPath(new URL('./fixtures/kafka-member.ts', import.meta.url));
// With kafkajs's default timings (session 30 s, rebalance 60 s) a rejoin takes over 30 s; with the
// adapter's defaults about 11 s. The bound leaves slack.
const REJOIN_BOUND_MS = 20_000;

describeWithEngine('kafka', 'Kafka: a crashed member replaced at once', (brokers) => {
  const buses: EventBus[] = [];
  afterAll(async () => {
    await Promise.all(buses.map((b) => b.close()));
  });

  it('the replacement joins and receives within the bound; rebalance noise is not logged as error', async () => {
    const topic = `t.crash.${randomUUID().slice(0, 8)}`;
    const group = `g.crash.${randomUUID().slice(0, 8)}`;
    const errors: string[] = [];
    const logger: Logger = {
      info: () => undefined,
      debug: () => undefined,
      warn: (fields, message) => void errors.push(`warn ${message} ${JSON.stringify(fields)}`),
      error: (fields, message) => void errors.push(`error ${message} ${JSON.stringify(fields)}`),
    };
    const admin = createKafkaEventBus({ brokers: brokerList(brokers), clientId: 'crash-test' });
    buses.push(admin);
    await admin.ensureTopics([topic]);

    const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', fixture], {
      env: { ...process.env, KAFKA_BROKERS: brokers, TOPIC: topic, GROUP: group },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => d.toString().includes('joined') && resolve());
      child.once('exit', (code) => reject(new Error(`member exited early (${code})`)));
    });
    child.kill('SIGKILL');

    const t0 = performance.now();
    const replacement = createKafkaEventBus({ brokers: brokerList(brokers), clientId: 'crash-test', logger });
    buses.push(replacement);
    const received: string[] = [];
    await replacement.subscribe({
      groupId: group,
      topics: [topic],
      handler: async (m) => void received.push(Buffer.from(m.value).toString()),
    });
    await admin.publish(
      topic,
      ['a', 'b', 'c', 'd'].map((v) => ({ key: v, value: Buffer.from(v), headers: {} })),
    );
    await expect.poll(() => received.length, { timeout: REJOIN_BOUND_MS, interval: 100 }).toBe(4);
    expect(performance.now() - t0).toBeLessThan(REJOIN_BOUND_MS);
    expect(errors.filter((line) => /rebalanc|re-join|generation/i.test(line))).toEqual([]);
  }, 90_000);
});

it('kafkajs rebalance narration is recognised as routine, real failures are not', () => {
  expect(
    isRoutineRebalance('Response Heartbeat(key: 12, version: 3)', {
      error: 'The group is rebalancing, so a rejoin is needed',
    }),
  ).toBe(true);
  expect(isRoutineRebalance('The group is rebalancing, re-joining', {})).toBe(true);
  expect(isRoutineRebalance('The coordinator is not aware of this member, re-joining the group', {})).toBe(
    true,
  );
  expect(isRoutineRebalance('Connection error: connect ECONNREFUSED 127.0.0.1:9092', {})).toBe(false);
  expect(isRoutineRebalance('Crash: KafkaJSNumberOfRetriesExceeded', { error: 'broker down' })).toBe(false);
});

it('the retryable errors of a broker or topic that has just started are transient, real failures are not', () => {
  const response = 'Response GroupCoordinator(key: 10, version: 2)';
  expect(isTransient(response, { error: 'The group coordinator is not available' })).toBe(true);
  expect(
    isTransient('Crash: KafkaJSProtocolError', {
      error: "The coordinator is loading and hence can't process requests for this group",
    }),
  ).toBe(true);
  expect(
    isTransient('Response Metadata(key: 3, version: 6)', {
      error: 'This server is not the leader for that topic-partition',
    }),
  ).toBe(true);
  expect(isTransient('Restarting the consumer in 100ms', { retryTime: 100 })).toBe(true);
  expect(isTransient('Connection error: connect ECONNREFUSED 127.0.0.1:9092', {})).toBe(false);
  expect(isTransient('Crash: KafkaJSNumberOfRetriesExceeded', { error: 'broker down' })).toBe(false);
});

import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deferred, waitFor } from '@subx/testing/wait';
import { MAX_DEAD_LETTER_ERROR_CHARS } from './shared.ts';
import { itCarriesCloudEvents } from './contract-cloud-events.ts';
import {
  RetryableError,
  dlqTopic,
  type BusObserver,
  type ConsumerLag,
  type CrashableSubscription,
  type DeliveredMessage,
  type EventBus,
  type SubscribeOptions,
} from './port.ts';

export interface ContractEventBus extends EventBus {
  subscribe(options: SubscribeOptions): Promise<CrashableSubscription>;
}

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);
const decode = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);
const uniqueTopic = (): string => `t-${randomUUID()}`;
const uniqueGroup = (): string => `g-${randomUUID()}`;

/**
 * The semantics documented in port.ts, run against one adapter. `makeBus` returns a fresh bus per
 * test, reporting to `observer`; every topic and group name is unique, so adapters sharing one
 * server do not interfere.
 */
export function describeEventBusContract(
  name: string,
  makeBus: (observer: BusObserver) => Promise<ContractEventBus>,
  { timeoutMs = 20_000 }: { timeoutMs?: number } = {},
): void {
  describe(`EventBus contract: ${name}`, () => {
    let bus: ContractEventBus;
    let subscriptions: CrashableSubscription[];
    const releaseOnCleanup: (() => void)[] = [];

    const until = (predicate: () => boolean, message: string): Promise<void> =>
      waitFor(predicate, { timeoutMs, intervalMs: 20, message });

    const subscribe = async (options: SubscribeOptions): Promise<CrashableSubscription> => {
      const subscription = await bus.subscribe(options);
      subscriptions.push(subscription);
      return subscription;
    };

    const newTopic = async (): Promise<string> => {
      const topic = uniqueTopic();
      await bus.ensureTopics([topic]);
      return topic;
    };

    /** Collects the topic's dead letters (a group of its own, from the beginning). */
    const deadLettersOf = async (topic: string): Promise<DeliveredMessage[]> => {
      const dead: DeliveredMessage[] = [];
      await subscribe({
        groupId: uniqueGroup(),
        topics: [dlqTopic(topic)],
        fromBeginning: true,
        handler: async (m) => void dead.push(m),
      });
      return dead;
    };

    /** The group's lag on the topic, as the bus reports it to its observer. */
    const lagOf = async (groupId: string, topic: string): Promise<number | undefined> =>
      (await seen.lag!()).find((l) => l.groupId === groupId && l.topic === topic)?.lag;

    // What the bus reported to its observer during the test.
    let seen: {
      published: string[];
      handled: string[];
      deadLettered: string[];
      lag: (() => Promise<ConsumerLag[]>) | undefined;
    };

    beforeEach(async () => {
      const record: typeof seen = { published: [], handled: [], deadLettered: [], lag: undefined };
      seen = record;
      bus = await makeBus({
        published: (topic, count) => record.published.push(`${topic} ${count}`),
        handled: (topic, groupId, outcome) => record.handled.push(`${topic} ${groupId} ${outcome}`),
        deadLettered: (topic, groupId) => record.deadLettered.push(`${topic} ${groupId}`),
        lagSource: (read) => (record.lag = read),
      });
      subscriptions = [];
    });

    afterEach(async () => {
      for (const release of releaseOnCleanup.splice(0)) release();
      await Promise.allSettled(subscriptions.map((s) => s.stop()));
      await bus.close();
    });

    it('is healthy and round-trips keys, binary values and headers', async () => {
      expect(await bus.isHealthy()).toBe(true);
      const topic = await newTopic();
      const got: DeliveredMessage[] = [];
      await subscribe({ groupId: uniqueGroup(), topics: [topic], handler: async (m) => void got.push(m) });
      const binary = Uint8Array.from([0, 1, 127, 128, 254, 255, 0]);
      await bus.publish(topic, [
        { key: 'k-1', value: binary, headers: { 'content-type': 'application/x-protobuf', 'x-note': 'ü ✓' } },
        { key: null, value: encode('no key') },
      ]);
      await until(() => got.length === 2, 'two messages');

      const keyed = got.find((m) => m.key === 'k-1');
      expect(keyed).toBeDefined();
      expect(Array.from(keyed!.value)).toEqual(Array.from(binary));
      expect(keyed!.headers).toEqual({ 'content-type': 'application/x-protobuf', 'x-note': 'ü ✓' });
      expect(keyed!.topic).toBe(topic);
      expect(keyed!.attempt).toBe(1);
      expect([0, 1, 2]).toContain(keyed!.partition);
      expect(keyed!.offset).toMatch(/^\d+$/);

      const unkeyed = got.find((m) => m.key === null);
      expect(unkeyed && decode(unkeyed.value)).toBe('no key');
      expect(unkeyed!.headers).toEqual({});
    });

    itCarriesCloudEvents({
      publish: (topic, messages) => bus.publish(topic, messages),
      newTopic,
      collect: async (topic) => {
        const got: DeliveredMessage[] = [];
        await subscribe({ groupId: uniqueGroup(), topics: [topic], handler: async (m) => void got.push(m) });
        return got;
      },
      until,
    });

    it('tells whether a group has active members', async () => {
      const topic = await newTopic();
      const groupId = uniqueGroup();
      expect(await bus.hasActiveMembers(groupId)).toBe(false);
      const member = await subscribe({ groupId, topics: [topic], handler: async () => undefined });
      await waitFor(() => bus.hasActiveMembers(groupId), {
        timeoutMs,
        intervalMs: 50,
        message: 'an active member',
      });
      await member.stop();
      await waitFor(async () => !(await bus.hasActiveMembers(groupId)), {
        timeoutMs,
        intervalMs: 50,
        message: 'no active member',
      });
    });

    it('starts a new group at the end of the topic unless fromBeginning', async () => {
      const topic = await newTopic();
      await bus.publish(topic, [{ key: 'a', value: encode('old') }]);
      const latest: string[] = [];
      const earliest: string[] = [];
      await subscribe({
        groupId: uniqueGroup(),
        topics: [topic],
        handler: async (m) => void latest.push(decode(m.value)),
      });
      await subscribe({
        groupId: uniqueGroup(),
        topics: [topic],
        fromBeginning: true,
        handler: async (m) => void earliest.push(decode(m.value)),
      });
      await bus.publish(topic, [{ key: 'a', value: encode('new') }]);
      await until(() => latest.length === 1 && earliest.length === 2, 'both groups');
      expect(latest).toEqual(['new']);
      expect(earliest).toEqual(['old', 'new']);
    });

    it('keeps the order of messages with the same key', async () => {
      const topic = await newTopic();
      const seen = new Map<string, number[]>();
      await subscribe({
        groupId: uniqueGroup(),
        topics: [topic],
        handler: async (m) => {
          const [key, index] = decode(m.value).split(':') as [string, string];
          expect(m.key).toBe(key);
          seen.set(key, [...(seen.get(key) ?? []), Number(index)]);
        },
      });
      const keys = ['alpha', 'beta', 'gamma', 'delta'];
      for (let batch = 0; batch < 4; batch++) {
        const messages = [];
        for (let i = batch * 10; i < batch * 10 + 10; i++) {
          for (const key of keys) messages.push({ key, value: encode(`${key}:${i}`) });
        }
        await bus.publish(topic, messages);
      }
      await until(() => keys.every((k) => seen.get(k)?.length === 40), 'all 160 messages');
      const expected = Array.from({ length: 40 }, (_, i) => i);
      for (const key of keys) expect(seen.get(key)).toEqual(expected);
    });

    it('delivers every message to each of two groups', async () => {
      const topic = await newTopic();
      const first: string[] = [];
      const second: string[] = [];
      await subscribe({
        groupId: uniqueGroup(),
        topics: [topic],
        handler: async (m) => void first.push(decode(m.value)),
      });
      await subscribe({
        groupId: uniqueGroup(),
        topics: [topic],
        handler: async (m) => void second.push(decode(m.value)),
      });
      const values = Array.from({ length: 12 }, (_, i) => `m${i}`);
      await bus.publish(
        topic,
        values.map((v) => ({ key: v, value: encode(v) })),
      );
      await until(() => first.length === 12 && second.length === 12, 'both groups to get 12');
      expect([...first].sort()).toEqual([...values].sort());
      expect([...second].sort()).toEqual([...values].sort());
    });

    it('splits partitions between two members of a group, rebalances, and never re-handles committed messages', async () => {
      const topic = await newTopic();
      const groupId = uniqueGroup();
      const handled: { member: 'A' | 'B'; value: string }[] = [];
      const handlerFor =
        (member: 'A' | 'B') =>
        async (m: DeliveredMessage): Promise<void> =>
          void handled.push({ member, value: decode(m.value) });
      const wave = (label: string, n: number) =>
        Array.from({ length: n }, (_, i) => ({ key: `${label}-${i}`, value: encode(`${label}-${i}`) }));
      const handledOf = (label: string) => handled.filter((h) => h.value.startsWith(`${label}-`));

      await subscribe({ groupId, topics: [topic], handler: handlerFor('A') });
      await bus.publish(topic, wave('w1', 12));
      await until(() => handledOf('w1').length >= 12, 'wave 1 on member A');

      const memberB = await subscribe({ groupId, topics: [topic], handler: handlerFor('B') });
      await bus.publish(topic, wave('w2', 30));
      await until(() => handledOf('w2').length >= 30, 'wave 2 on A and B');
      const wave2Members = new Set(handledOf('w2').map((h) => h.member));
      expect(wave2Members).toEqual(new Set(['A', 'B']));

      await memberB.stop();
      await bus.publish(topic, wave('w3', 12));
      await until(() => handledOf('w3').length >= 12, 'wave 3 on member A after B left');
      expect(new Set(handledOf('w3').map((h) => h.member))).toEqual(new Set(['A']));

      const counts = new Map<string, number>();
      for (const h of handled) counts.set(h.value, (counts.get(h.value) ?? 0) + 1);
      expect(counts.size).toBe(54);
      expect([...counts.values()].every((c) => c === 1)).toBe(true);
    });

    it('redelivers to the group a message whose member crashed before committing', async () => {
      const topic = await newTopic();
      const groupId = uniqueGroup();
      const started = deferred();
      const neverEnds = deferred();
      releaseOnCleanup.push(() => neverEnds.resolve());
      const crashing = await subscribe({
        groupId,
        topics: [topic],
        handler: async () => {
          started.resolve();
          await neverEnds.promise;
        },
      });
      await bus.publish(topic, [{ key: 'job', value: encode('job-1') }]);
      await started.promise;
      await crashing.crash();

      const redelivered: DeliveredMessage[] = [];
      await subscribe({ groupId, topics: [topic], handler: async (m) => void redelivered.push(m) });
      await until(() => redelivered.length >= 1, 'redelivery to the surviving member');
      expect(decode(redelivered[0]!.value)).toBe('job-1');
      expect(redelivered[0]!.key).toBe('job');
    });

    it('redelivers a message whose handler throws RetryableError, without dead-lettering it', async () => {
      const topic = await newTopic();
      const attempts: number[] = [];
      const done: string[] = [];
      await subscribe({
        groupId: uniqueGroup(),
        topics: [topic],
        maxAttempts: 1,
        handler: async (m) => {
          const value = decode(m.value);
          if (value === 'flaky') {
            attempts.push(m.attempt);
            if (m.attempt < 3) throw new RetryableError('downstream unavailable');
          }
          done.push(value);
        },
      });
      await bus.publish(topic, [
        { key: 'k', value: encode('flaky') },
        { key: 'k', value: encode('next') },
      ]);
      await until(() => done.length === 2, 'the flaky message and the next one');
      expect(attempts).toEqual([1, 2, 3]);
      expect(done).toEqual(['flaky', 'next']);
    });

    it('dead-letters a poison message after maxAttempts and keeps the partition flowing', async () => {
      const topic = await newTopic();
      const poisonSeen: DeliveredMessage[] = [];
      const good: string[] = [];
      const dead = await deadLettersOf(topic);
      await subscribe({
        groupId: uniqueGroup(),
        topics: [topic],
        maxAttempts: 2,
        handler: async (m) => {
          const value = decode(m.value);
          if (value === 'poison') {
            poisonSeen.push(m);
            // an error text of any length: the dead letter carries it capped
            throw new Error(`cannot parse poison ${'x'.repeat(100_000)}`);
          }
          good.push(value);
        },
      });
      await bus.publish(topic, [
        { key: 'same', value: encode('poison'), headers: { 'x-request-id': 'r-1' } },
        { key: 'same', value: encode('good-1') },
        { key: 'same', value: encode('good-2') },
      ]);
      await until(() => good.length === 2 && dead.length === 1, 'the good messages and the dead letter');
      expect(good).toEqual(['good-1', 'good-2']);
      expect(poisonSeen.map((m) => m.attempt)).toEqual([1, 2]);
      const letter = dead[0]!;
      const original = poisonSeen[0]!;
      expect(letter.topic).toBe(dlqTopic(topic));
      expect(letter.key).toBe('same');
      expect(decode(letter.value)).toBe('poison');
      expect(letter.headers).toMatchObject({
        'x-request-id': 'r-1',
        'x-original-topic': topic,
        'x-original-partition': String(original.partition),
        'x-original-offset': original.offset,
      });
      expect(letter.headers['x-error-message']).toContain('cannot parse poison');
      expect(letter.headers['x-error-message']!.length).toBeLessThanOrEqual(MAX_DEAD_LETTER_ERROR_CHARS);
    });

    it('reports published, handled and dead-lettered messages and consumer lag to its observer', async () => {
      const topic = await newTopic();
      const groupId = uniqueGroup();
      const done: string[] = [];
      let retried = false;
      const subscription = await subscribe({
        groupId,
        topics: [topic],
        maxAttempts: 2,
        handler: async (m) => {
          const text = decode(m.value);
          if (text === 'poison') throw new Error('poison');
          if (text === 'retry' && !retried) {
            retried = true;
            throw new RetryableError('not yet');
          }
          done.push(text);
        },
      });
      await bus.publish(topic, [
        { key: 'a', value: encode('ok') },
        { key: 'b', value: encode('retry') },
        { key: 'c', value: encode('poison') },
      ]);
      const handled = (outcome: string) => seen.handled.filter((h) => h === `${topic} ${groupId} ${outcome}`);
      // Reports follow the handler (and the dead-letter publish), so wait for the reports themselves.
      await until(
        () => handled('ok').length === 2 && seen.published.includes(`${dlqTopic(topic)} 1`),
        'two handled, one dead-lettered',
      );
      expect(done.sort()).toEqual(['ok', 'retry']);
      expect(seen.published).toContain(`${topic} 3`);
      expect(handled('ok')).toHaveLength(2);
      expect(handled('retry')).toHaveLength(1);
      expect(handled('failed')).toHaveLength(2);
      expect(seen.deadLettered).toEqual([`${topic} ${groupId}`]);

      // Lag: nothing behind once everything is committed, then two behind while the group is away.
      expect(seen.lag).toBeDefined();
      await waitFor(async () => (await lagOf(groupId, topic)) === 0, {
        timeoutMs,
        intervalMs: 50,
        message: 'lag 0',
      });
      await subscription.stop();
      await bus.publish(topic, [
        { key: 'a', value: encode('later 1') },
        { key: 'b', value: encode('later 2') },
      ]);
      await waitFor(async () => (await lagOf(groupId, topic)) === 2, {
        timeoutMs,
        intervalMs: 50,
        message: 'lag 2',
      });
    });

    it('stop() waits for the in-flight handler and commits its message', async () => {
      const topic = await newTopic();
      const groupId = uniqueGroup();
      const started = deferred();
      let finished = false;
      const first = await subscribe({
        groupId,
        topics: [topic],
        handler: async () => {
          started.resolve();
          await new Promise((resolve) => setTimeout(resolve, 300));
          finished = true;
        },
      });
      await bus.publish(topic, [{ key: 'k', value: encode('slow') }]);
      await started.promise;
      await first.stop();
      expect(finished).toBe(true);

      const later: string[] = [];
      await subscribe({ groupId, topics: [topic], handler: async (m) => void later.push(decode(m.value)) });
      await bus.publish(topic, [{ key: 'k', value: encode('marker') }]);
      await until(() => later.includes('marker'), 'the marker on the next member');
      expect(later).toEqual(['marker']);
    });

    describe('perPartitionConcurrency', () => {
      /** Messages with one key: one partition. */
      const sameKey = (values: readonly string[]) => values.map((v) => ({ key: 'one', value: encode(v) }));

      it('rejects a concurrency that is not a positive integer', async () => {
        const topic = await newTopic();
        const handler = async () => undefined;
        for (const bad of [0, -1, 1.5, Number.NaN]) {
          await expect(
            bus.subscribe({ groupId: uniqueGroup(), topics: [topic], handler, perPartitionConcurrency: bad }),
          ).rejects.toThrow(/perPartitionConcurrency must be a positive integer/);
          await expect(
            bus.subscribe({ groupId: uniqueGroup(), topics: [topic], handler, maxInFlight: bad }),
          ).rejects.toThrow(/maxInFlight must be a positive integer/);
        }
      });

      it('overlaps slow handlers of one partition; stop() waits for all of them and commits them', async () => {
        const topic = await newTopic();
        const groupId = uniqueGroup();
        const release = deferred();
        releaseOnCleanup.push(() => release.resolve());
        const started: string[] = [];
        const finished: string[] = [];
        let running = 0;
        let mostAtOnce = 0;
        const member = await subscribe({
          groupId,
          topics: [topic],
          perPartitionConcurrency: 4,
          handler: async (m) => {
            started.push(decode(m.value));
            mostAtOnce = Math.max(mostAtOnce, ++running);
            await release.promise;
            running--;
            finished.push(decode(m.value));
          },
        });
        const values = ['s0', 's1', 's2', 's3'];
        await bus.publish(topic, sameKey(values));
        // All four of one partition running at once, none finished.
        await until(() => started.length === 4, 'four handlers running at once');
        expect(mostAtOnce).toBe(4);
        expect(finished).toEqual([]);

        const stopping = member.stop();
        setTimeout(() => release.resolve(), 100);
        await stopping;
        expect([...finished].sort()).toEqual(values);

        const later: string[] = [];
        await subscribe({ groupId, topics: [topic], handler: async (m) => void later.push(decode(m.value)) });
        await bus.publish(topic, sameKey(['marker']));
        await until(() => later.includes('marker'), 'the marker on the next member');
        expect(later).toEqual(['marker']);
      });

      it('keeps at most maxInFlight messages of a member in flight', async () => {
        const topic = await newTopic();
        const release = deferred();
        releaseOnCleanup.push(() => release.resolve());
        const started: string[] = [];
        const done: string[] = [];
        await subscribe({
          groupId: uniqueGroup(),
          topics: [topic],
          perPartitionConcurrency: 4,
          maxInFlight: 2,
          handler: async (m) => {
            started.push(decode(m.value));
            await release.promise;
            done.push(decode(m.value));
          },
        });
        await bus.publish(topic, sameKey(['c0', 'c1', 'c2', 'c3']));
        await until(() => started.length === 2, 'two handlers running');
        // Given time, a third does not start while two run.
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(started).toEqual(['c0', 'c1']);
        release.resolve();
        await until(() => done.length === 4, 'all four handled');
      });

      it('never commits past an unfinished message: after a crash it is redelivered, nothing lost', async () => {
        const topic = await newTopic();
        const groupId = uniqueGroup();
        const neverEnds = deferred();
        releaseOnCleanup.push(() => neverEnds.resolve());
        const firstDone: string[] = [];
        const crashing = await subscribe({
          groupId,
          topics: [topic],
          perPartitionConcurrency: 4,
          handler: async (m) => {
            if (decode(m.value) === 'slow') await neverEnds.promise;
            firstDone.push(decode(m.value));
          },
        });
        await bus.publish(topic, sameKey(['slow', 'fast-1', 'fast-2', 'fast-3']));
        await until(() => firstDone.length === 3, 'the three later messages handled around the slow one');
        expect([...firstDone].sort()).toEqual(['fast-1', 'fast-2', 'fast-3']);
        await crashing.crash();

        const redelivered: string[] = [];
        await subscribe({
          groupId,
          topics: [topic],
          perPartitionConcurrency: 4,
          handler: async (m) => void redelivered.push(decode(m.value)),
        });
        await bus.publish(topic, sameKey(['marker']));
        await until(() => redelivered.includes('slow') && redelivered.includes('marker'), 'slow and marker');
        // The slow one comes again; the later ones may (the commit stayed before the slow one).
        expect(redelivered[0]).toBe('slow');
        expect(redelivered.filter((v) => v === 'slow')).toHaveLength(1);
        await waitFor(async () => (await lagOf(groupId, topic)) === 0, {
          timeoutMs,
          intervalMs: 50,
          message: 'lag 0',
        });
      });

      it('retries a failing message while later ones succeed, dead-letters it, and only then commits past it', async () => {
        const topic = await newTopic();
        const groupId = uniqueGroup();
        const gate = deferred();
        releaseOnCleanup.push(() => gate.resolve());
        const poisonAttempts: number[] = [];
        const good: string[] = [];
        const dead = await deadLettersOf(topic);
        await subscribe({
          groupId,
          topics: [topic],
          perPartitionConcurrency: 4,
          maxAttempts: 3,
          handler: async (m) => {
            const value = decode(m.value);
            if (value !== 'poison') return void good.push(value);
            poisonAttempts.push(m.attempt);
            // Held at its second attempt until the later messages are checked.
            if (m.attempt === 2) await gate.promise;
            throw new Error('cannot parse poison');
          },
        });
        await bus.publish(topic, sameKey(['poison', 'good-1', 'good-2']));
        await until(
          () => good.length === 2 && poisonAttempts.length === 2,
          'the later ones around the retries',
        );
        // Nothing committed while the first message is unfinished, though the later ones are done.
        expect(await lagOf(groupId, topic)).toBe(3);
        expect(dead).toEqual([]);

        gate.resolve();
        await until(() => dead.length === 1, 'the dead letter');
        expect(poisonAttempts).toEqual([1, 2, 3]);
        expect(decode(dead[0]!.value)).toBe('poison');
        expect(dead[0]!.headers['x-original-offset']).toBe('0');
        await waitFor(async () => (await lagOf(groupId, topic)) === 0, {
          timeoutMs,
          intervalMs: 50,
          message: 'lag 0',
        });
        expect([...good].sort()).toEqual(['good-1', 'good-2']);
      });
    });
  });
}

import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { FAST_KAFKA_TIMINGS, brokerList, describeWithEngine } from '@subx/testing/engines';
import { describeEventBusContract } from '../src/event-bus/contract.ts';
import { createKafkaEventBus } from '../src/event-bus/kafka.ts';

describeWithEngine('kafka', 'Kafka event bus', (brokers) => {
  describeEventBusContract(
    'kafka',
    async (observer) =>
      createKafkaEventBus({
        brokers: brokerList(brokers),
        clientId: 'ports-contract',
        ...FAST_KAFKA_TIMINGS,
        observer,
      }),
    { timeoutMs: 30_000 },
  );
});

describeWithEngine('kafka', 'Kafka event bus timers', (brokers) => {
  it('never schedules a negative timeout (no TimeoutNegativeWarning) while it talks to the broker', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    const bus = createKafkaEventBus({
      brokers: brokerList(brokers),
      clientId: 'ports-timers',
      ...FAST_KAFKA_TIMINGS,
    });
    try {
      const topic = `t-${randomUUID()}`;
      await bus.ensureTopics([topic]);
      for (let i = 0; i < 5; i++)
        await bus.publish(topic, [{ key: 'k', value: new TextEncoder().encode(`m${i}`) }]);
      // warnings are emitted on the next tick
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      await bus.close();
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => w.startsWith('TimeoutNegativeWarning'))).toEqual([]);
  });
});

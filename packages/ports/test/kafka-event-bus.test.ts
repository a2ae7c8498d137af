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

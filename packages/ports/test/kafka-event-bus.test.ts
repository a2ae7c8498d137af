import { brokerList, describeWithEngine } from '@subx/testing/engines';
import { describeEventBusContract } from '../src/event-bus/contract.ts';
import { createKafkaEventBus } from '../src/event-bus/kafka.ts';

describeWithEngine('kafka', 'Kafka event bus', (brokers) => {
  describeEventBusContract(
    'kafka',
    async (observer) =>
      createKafkaEventBus({
        brokers: brokerList(brokers),
        clientId: 'ports-contract',
        // Short group timings so joins, leaves and rebalances take well under a second or two.
        consumer: {
          sessionTimeout: 6_000,
          heartbeatInterval: 300,
          rebalanceTimeout: 5_000,
          maxWaitTimeInMs: 50,
        },
        retryBackoff: { initialMs: 20, maxMs: 200 },
        observer,
      }),
    { timeoutMs: 30_000 },
  );
});

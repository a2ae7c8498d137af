import { describeEventBusContract } from './contract.ts';
import { createInProcessEventBus } from './in-process.ts';

describeEventBusContract('in-process', async (observer) =>
  createInProcessEventBus({ retryBackoff: { initialMs: 5, maxMs: 50 }, observer }),
);

import { describeWithEngine } from '@subx/testing/engines';
import { describeKeyValueStoreContract } from '../src/key-value/contract.ts';
import { createRedisKeyValueStore } from '../src/key-value/redis.ts';

describeWithEngine('redis', 'Redis key-value store', (url) => {
  describeKeyValueStoreContract('redis', async () => createRedisKeyValueStore({ url }), {
    sharedServer: true,
  });
});

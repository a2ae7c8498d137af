/**
 * Test wiring (used by *.test.ts only): N gateway "replicas" of the access module sharing one
 * document store, key-value store and bus, as replicas share MongoDB, Redis and Kafka.
 */
import {
  ManualClock,
  createInMemoryDocumentStore,
  createInMemoryKeyValueStore,
  createInProcessEventBus,
} from '@subx/ports';
import type { DocumentStore, EventBus, KeyValueStore } from '@subx/ports';
import { createAccessModule } from '../../src/access/index.ts';
import type { AccessModule, AccessModuleDeps } from '../../src/access/index.ts';
import { silentLogger } from '@subx/ports';

export const TEST_PEPPER = 'test-pepper-0123456789-abcdefghijklmnop';
export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

export interface Replicas {
  store: DocumentStore;
  kv: KeyValueStore;
  bus: EventBus;
  clock: ManualClock;
  modules: AccessModule[];
  stop(): Promise<void>;
}

export async function startReplicas(
  count: number,
  options: {
    store?: DocumentStore;
    kv?: KeyValueStore;
    bus?: EventBus;
    clock?: ManualClock;
    config?: Partial<AccessModuleDeps['config']>;
    audit?: AccessModuleDeps['audit'];
  } = {},
): Promise<Replicas> {
  const clock = options.clock ?? new ManualClock(Date.UTC(2026, 2, 15, 10, 0, 0));
  const store = options.store ?? createInMemoryDocumentStore();
  const kv = options.kv ?? createInMemoryKeyValueStore({ clock });
  const bus = options.bus ?? createInProcessEventBus();
  const modules: AccessModule[] = [];
  for (let i = 0; i < count; i += 1) {
    const module = createAccessModule({
      store,
      kv,
      bus,
      clock,
      logger: silentLogger,
      ...(options.audit ? { audit: options.audit } : {}),
      config: { apiKeyPepper: TEST_PEPPER, adminToken: TEST_ADMIN_TOKEN, ...options.config },
    });
    await module.start();
    modules.push(module);
  }
  return {
    store,
    kv,
    bus,
    clock,
    modules,
    async stop() {
      for (const m of modules) await m.stop();
    },
  };
}

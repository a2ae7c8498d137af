/**
 * End to end: the broker goes away under batch traffic. The suite starts its OWN
 * Kafka (scripts/engines.sh with a private ENGINES_DIR) because it stops it. Batches must answer
 * well inside their 60 s deadline, never with INTERNAL_ERROR: the gateway gives the bus
 * FANOUT_BUS_TIMEOUT_MS (5 s) and then runs the items over gRPC; once the broker is back the bus
 * carries them again.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@subx/testing/wait';
import { engines, javaForKafka, listening, root, startSplitSystem, type SplitSystem } from './support.ts';

const BOUND_MS = 25_000;

const java = javaForKafka();

describe.skipIf(!java)('fault: Kafka goes down under batch traffic', () => {
  const dir = mkdtempSync(join(tmpdir(), 'subx-fault-kafka-'));
  let brokers = '';
  let system: SplitSystem;

  beforeAll(async () => {
    brokers = /KAFKA_BROKERS=(\S+)/.exec(engines(dir, 'up', 'kafka'))?.[1] ?? '';
    system = await startSplitSystem({ brokers, videoCount: 3, prefix: 'kafkav' });
  }, 240_000);

  afterAll(async () => {
    await system?.stop();
    try {
      engines(dir, 'down');
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(`${dir}.lock`, { force: true });
    }
  }, 120_000);

  it('broker down: the batch answers within the bound (over gRPC); broker back: over the bus again', async () => {
    const port = Number(brokers.split(':').pop());
    // Down for 20 s, then back on the same port with its data.
    const restart = spawn('bash', ['scripts/engines.sh', 'restart', 'kafka', '--pause', '20'], {
      cwd: root,
      env: { ...process.env, ENGINES_DIR: dir },
      stdio: 'ignore',
    });
    const restarted = new Promise((resolve) => restart.once('exit', resolve));
    await waitFor(async () => !(await listening(port)), {
      timeoutMs: 30_000,
      intervalMs: 250,
      message: `kafka to stop listening on ${port}`,
    });

    const during = await system.batch(system.urls);
    expect(during.status).toBe(200);
    expect(during.ms).toBeLessThan(BOUND_MS);
    expect(system.codes(during)).toEqual(['ok', 'ok', 'ok']);

    await restarted;
    await waitFor(async () => system.codes(await system.batch(system.urls)).every((c) => c === 'ok'), {
      timeoutMs: 60_000,
      intervalMs: 250,
      message: 'every batch item ok again',
    });
    const after = await system.batch(system.urls);
    expect(after.ms).toBeLessThan(BOUND_MS);
    expect(system.codes(after)).toEqual(['ok', 'ok', 'ok']);
  }, 180_000);
});

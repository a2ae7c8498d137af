/**
 * A service started beside its engines (a fresh cluster, compose without health conditions, a
 * loaded node) waits for them within STARTUP_DEPENDENCY_TIMEOUT_MS instead of exiting at the first
 * refusal, and one that never answers is one line naming the engine and its variable, exit 1: real
 * processes (each service's main.ts and `npm start`), a real Redis behind a gate that opens late.
 */
import { createConnection, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { describeWithEngine } from '@subx/testing/engines';
import { freePort } from '@subx/testing/free-port';
import { jsonLines } from '@subx/testing/log-lines';
import { exitWithin, startServiceProcess } from './service-process.ts';

// Each service's gRPC port too: these run beside other suites.
const FREE_PORTS = { GRPC_PORT: '0' };

describe('an engine that never answers: one line naming it and its variable, exit 1', () => {
  it('billing: Kafka and MongoDB both unreachable, the password not shown', async () => {
    const [kafkaPort, mongoPort] = [await freePort(), await freePort()];
    const child = startServiceProcess('services/billing/src/main.ts', {
      ...FREE_PORTS,
      LOG_LEVEL: 'silent',
      KAFKA_BROKERS: `127.0.0.1:${kafkaPort}`,
      MONGO_URL: `mongodb://ledger:hunter2-secret@127.0.0.1:${mongoPort}/subx`,
      STARTUP_DEPENDENCY_TIMEOUT_MS: '2s',
    });
    const code = await exitWithin(child, 60_000);
    expect(code, child.stderr()).toBe(1);
    const lines = child.stderr().trim().split('\n');
    expect(lines, child.stderr()).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^billing: kafka \\(127\\.0\\.0\\.1:${kafkaPort}, KAFKA_BROKERS\\) did not answer within 2 s \\(STARTUP_DEPENDENCY_TIMEOUT_MS\\): .+; ` +
          `mongo \\(127\\.0\\.0\\.1:${mongoPort}, MONGO_URL\\) did not answer within 2 s \\(STARTUP_DEPENDENCY_TIMEOUT_MS\\): .+$`,
      ),
    );
    expect(child.stderr() + child.stdout()).not.toContain('hunter2');
  }, 90_000);

  it('npm start with REDIS_URL set: the same line, prefixed subx', async () => {
    const redisPort = await freePort();
    const child = startServiceProcess('scripts/start-embedded.ts', {
      ...FREE_PORTS,
      LOG_LEVEL: 'silent',
      PORT: '0',
      ADMIN_PORT: '0',
      DASHBOARD_PORT: '0',
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      STARTUP_DEPENDENCY_TIMEOUT_MS: '1s',
    });
    const code = await exitWithin(child, 60_000);
    expect(code, child.stderr()).toBe(1);
    expect(child.stderr().trim()).toMatch(
      new RegExp(
        `^subx: redis \\(127\\.0\\.0\\.1:${redisPort}, REDIS_URL\\) did not answer within 1 s \\(STARTUP_DEPENDENCY_TIMEOUT_MS\\): .+$`,
      ),
    );
  }, 90_000);
});

describeWithEngine('redis', 'a service started before its Redis answers', (redisUrl) => {
  let gate: Server | undefined;
  const sockets = new Set<Socket>();
  afterEach(async () => {
    for (const socket of sockets) socket.destroy();
    if (gate) await new Promise((resolve) => gate!.close(resolve));
  });

  it('waits, says on what, and starts once Redis answers; then stops cleanly', async () => {
    const real = new URL(redisUrl);
    const port = await freePort();
    const child = startServiceProcess('services/ai/src/main.ts', {
      ...FREE_PORTS,
      LOG_LEVEL: 'info',
      REDIS_URL: `redis://127.0.0.1:${port}`,
      STARTUP_DEPENDENCY_TIMEOUT_MS: '60s',
    });
    // Refused for a while: the service must still be there, waiting, not exited.
    const waiting = /dependency not answering yet/;
    const deadline = Date.now() + 30_000;
    while (!waiting.test(child.stdout()) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    expect(child.stdout(), child.stderr()).toMatch(waiting);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(child.stdout()).not.toMatch(/AI service started/);

    // The gate opens onto the real Redis.
    gate = createServer((inbound) => {
      const outbound = createConnection(Number(real.port || 6379), real.hostname);
      sockets.add(inbound).add(outbound);
      inbound.pipe(outbound).pipe(inbound);
      inbound.on('error', () => outbound.destroy());
      outbound.on('error', () => inbound.destroy());
    });
    await new Promise<void>((resolve) => gate!.listen(port, '127.0.0.1', resolve));

    const started = /AI service started/;
    const startDeadline = Date.now() + 30_000;
    while (!started.test(child.stdout()) && Date.now() < startDeadline)
      await new Promise((r) => setTimeout(r, 100));
    const lines = jsonLines(child.stdout()).map((line) => JSON.parse(line) as Record<string, unknown>);
    const warned = lines.filter((l) => l.msg === 'dependency not answering yet; waiting before starting');
    expect(warned.length, child.stdout()).toBeGreaterThan(0);
    expect(warned[0]).toMatchObject({
      dependency: 'redis',
      target: `127.0.0.1:${port}`,
      variable: 'REDIS_URL',
    });
    expect(lines.find((l) => l.msg === 'dependency answers now')).toMatchObject({ dependency: 'redis' });
    expect(
      lines.some((l) => l.msg === 'AI service started'),
      child.stdout(),
    ).toBe(true);

    child.kill('SIGTERM');
    expect(await exitWithin(child, 30_000)).toBe(0);
  }, 120_000);
});

// ESM auto-instrumentation of ioredis, kafkajs and mongodb against real engines, in a child process
// started like a service (`node --import <preload> <main>.ts`).
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describeWithEngine } from '@subx/testing/engines';
import { expect, it } from 'vitest';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));

interface Output {
  topic: string;
  rootTraceId: string;
  spans: { scope: string; name: string; traceId: string }[];
}

function run(env: Record<string, string>): Promise<Output> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--disable-warning=ExperimentalWarning', '--import', './memory-telemetry.ts', './traced-clients.ts'],
      { cwd: fixtures, timeout: 90_000, env: { PATH: process.env.PATH ?? '', ...env } },
      (err, stdout, stderr) =>
        err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout) as Output),
    );
  });
}

describeWithEngine('redis', 'ESM instrumentation: ioredis, kafkajs, mongodb', (REDIS_URL) => {
  describeWithEngine('kafka', 'with kafka', (KAFKA_BROKERS) => {
    describeWithEngine('mongo', 'with mongo', (MONGO_URL) => {
      it('each client produces spans in the active trace', async () => {
        const out = await run({ REDIS_URL, KAFKA_BROKERS, MONGO_URL });
        const inTrace = out.spans.filter((s) => s.traceId === out.rootTraceId);
        const names = (scope: string) => inTrace.filter((s) => s.scope === scope).map((s) => s.name);
        expect(names('@opentelemetry/instrumentation-ioredis')).toContain('set');
        expect(names('@opentelemetry/instrumentation-kafkajs')).toContain(`send ${out.topic}`);
        expect(names('@opentelemetry/instrumentation-mongodb')).toContain('insert c');
      });
    });
  });
});

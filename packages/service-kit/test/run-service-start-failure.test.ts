// A service whose start fails after it opened something (a listening server here, a gRPC server or
// a Kafka consumer in the services) must exit, so that Docker or Kubernetes starts it again,
// instead of lingering half-started with its port still answering.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const runService = fileURLToPath(new URL('../src/index.ts', import.meta.url));

it('exits with 1 when start fails after opening a server', async () => {
  const script = `
    import { createServer } from 'node:net';
    import { z } from 'zod';
    const { runService } = await import(${JSON.stringify(runService)});
    await runService({
      service: 'failing',
      schema: z.object({}),
      start: async () => {
        await new Promise((resolve) => createServer().listen(0, '127.0.0.1', resolve));
        throw new Error('broker went away during start');
      },
    });
  `;
  const child = spawn(
    process.execPath,
    ['--disable-warning=ExperimentalWarning', '--input-type=module', '-e', script],
    {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      env: { ...process.env, METRICS_PORT: 'off', LOG_LEVEL: 'silent' },
      stdio: 'ignore',
    },
  );
  const code = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve(null);
    }, 15_000);
    child.once('exit', (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
  expect(code, 'the process did not exit within 15 s').toBe(1);
}, 30_000);

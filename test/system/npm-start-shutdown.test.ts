/**
 * `npm start` stops within SHUTDOWN_TIMEOUT_MS, as every service does (it used a fixed 15 s): the
 * deadline it announces when SIGTERM starts the shutdown is the one configured, and it still stops
 * cleanly (exit 0) within it.
 */
import { describe, expect, it } from 'vitest';
import { startNpmStart } from './npm-start-process.ts';

describe('npm start and SHUTDOWN_TIMEOUT_MS', () => {
  it('shuts down under the configured deadline', async () => {
    const running = await startNpmStart({ SHUTDOWN_TIMEOUT_MS: '2500', LOG_LEVEL: 'info' });
    const exited = new Promise<number | null>((resolve) =>
      running.child.once('exit', (code) => resolve(code)),
    );
    running.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const shuttingDown = running
      .output()
      .split('\n')
      .find((line) => line.includes('"msg":"shutting down"') && line.includes('"service":"subx"'));
    expect(shuttingDown).toMatch(/"timeoutMs":2500\b/);
  }, 90_000);
});

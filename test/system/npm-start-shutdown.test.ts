/**
 * `npm start` stops within SHUTDOWN_TIMEOUT_MS, as every service does (it used a fixed 15 s): the
 * deadline it announces when SIGTERM starts the shutdown is the one configured, and it still stops
 * cleanly (exit 0) within it. On Kafka the demo starts without error lines (the retryable errors of
 * a broker that has just made its topics are kafkajs's to retry) and stops on the first SIGINT.
 */
import { describe, expect, it } from 'vitest';
import { EMBEDDED_ENV, spawnLauncher } from '@subx/embedded/launcher';
import { describeWithEngine } from '@subx/testing/engines';
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

describeWithEngine('kafka', 'npm run demo on Kafka', (brokers) => {
  it('starts without error lines and exits 0 on the first SIGINT, well inside the deadline', async () => {
    const launcher = spawnLauncher(['--demo'], {
      ...EMBEDDED_ENV,
      KAFKA_BROKERS: brokers,
      LOG_LEVEL: 'warn',
      YOUTUBE_BASE_URL: '',
      API_KEY_PEPPER: '',
    });
    try {
      await launcher.waitFor(/Ctrl-C stops everything/, 90_000);
      const exited = new Promise<number | null>((resolve) =>
        launcher.child.once('exit', (code) => resolve(code)),
      );
      const started = performance.now();
      launcher.child.kill('SIGINT');
      expect(await exited).toBe(0);
      // three Kafka consumers (gateway, extractor, billing) stop one after another
      expect(performance.now() - started).toBeLessThan(10_000);
      const loud = launcher
        .output()
        .split('\n')
        .filter((line) => /"level":"(error|warn|fatal)"/.test(line));
      expect(loud).toEqual([]);
    } finally {
      await launcher.stop();
    }
  }, 150_000);
});

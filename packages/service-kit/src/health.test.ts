import { describe, expect, it } from 'vitest';
import { createHealthRegistry } from './health.ts';

describe('health registry', () => {
  it('is ok with no checks and when all checks pass', async () => {
    expect(await createHealthRegistry().run()).toEqual({ status: 'ok', checks: {} });
    const registry = createHealthRegistry();
    registry.register('redis', async () => 'PONG');
    registry.register('sync', () => true);
    const report = await registry.run();
    expect(report.status).toBe('ok');
    expect(report.checks.redis).toMatchObject({ status: 'ok', critical: true });
    expect(report.checks.sync?.status).toBe('ok');
  });

  it('a failing critical check → down; a failing non-critical one → degraded', async () => {
    const degraded = createHealthRegistry();
    degraded.register('redis', async () => undefined);
    degraded.register(
      'ai',
      async () => {
        throw new Error('connection refused');
      },
      { critical: false },
    );
    const d = await degraded.run();
    expect(d.status).toBe('degraded');
    expect(d.checks.ai).toMatchObject({ status: 'fail', critical: false, error: 'connection refused' });

    const down = createHealthRegistry();
    down.register('redis', () => false);
    down.register(
      'ai',
      async () => {
        throw new Error('x');
      },
      { critical: false },
    );
    const r = await down.run();
    expect(r.status).toBe('down');
    expect(r.checks.redis).toMatchObject({ status: 'fail', error: 'check reported unhealthy' });
  });

  it('times out a hanging check, aborts its signal, and runs checks concurrently', async () => {
    const registry = createHealthRegistry({ defaultTimeoutMs: 1_000 });
    let aborted = false;
    registry.register(
      'hangs',
      (signal) => {
        signal.addEventListener('abort', () => (aborted = true));
        return new Promise(() => {});
      },
      { timeoutMs: 50 },
    );
    registry.register('hangs-too', () => new Promise(() => {}), { timeoutMs: 60 });
    const t0 = performance.now();
    const report = await registry.run();
    const elapsed = performance.now() - t0;
    expect(report.status).toBe('down');
    expect(report.checks.hangs).toMatchObject({ status: 'fail', error: 'timeout after 50ms' });
    expect(report.checks['hangs-too']?.error).toBe('timeout after 60ms');
    expect(aborted).toBe(true);
    expect(elapsed).toBeLessThan(1_000); // concurrent, and not the default timeout
  });

  it('rejects duplicate names', () => {
    const registry = createHealthRegistry();
    registry.register('a', () => true);
    expect(() => registry.register('a', () => true)).toThrow(/already registered/);
  });
});

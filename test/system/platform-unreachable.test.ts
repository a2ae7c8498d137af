/**
 * The video platform unreachable (a closed port on loopback), through the real YouTube client, the
 * extractor over gRPC and the gateway: an extract says why in its error (not "fetch failed"), and
 * /health turns `degraded` with `platform: "unreachable"` (still 200: a restart does not fix it).
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInProcessEventBus } from '@subx/ports';
import { waitFor } from '@subx/testing/wait';
import { startInProcessSystem } from './support.ts';
import type { InProcessSystem } from './support.ts';

describe('an unreachable platform through the gateway', () => {
  const bus = createInProcessEventBus();
  let system: InProcessSystem;

  beforeAll(async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    system = await startInProcessSystem({ youtubeUrl: `http://127.0.0.1:${port}`, bus, credits: 10 });
  });
  afterAll(async () => {
    await system?.stop();
    await bus.close();
  });

  it('an extract names the cause, and /health reports the platform unreachable', async () => {
    const res = await system.gateway.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      headers: { 'x-api-key': system.apiKey, 'content-type': 'application/json' },
      payload: { url: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ' },
    });
    expect(res.statusCode, res.body).toBe(502);
    const error = res.json<{ error: { code: string; message: string; retryable: boolean } }>().error;
    expect(error).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true });
    expect(error.message).toContain('connection refused');
    expect(error.message).not.toContain('fetch failed');
    let health: { status: string; platform: string } = { status: '', platform: '' };
    await waitFor(
      async () => {
        health = (await system.gateway.app.inject({ method: 'GET', url: '/health' })).json();
        return health.platform === 'unreachable';
      },
      { timeoutMs: 15_000, intervalMs: 250, message: 'the platform to be reported unreachable' },
    );
    expect(health.status).toBe('degraded');
  }, 30_000);
});

// The container health probe (deploy/docker/healthcheck.ts) is what Docker and compose use to decide
// that a service is up and dependants may start. It is run here exactly as the image runs it: a
// separate Node process, against a real grpc-js server with the grpc.health.v1 implementation the
// services use, and against a real HTTP server for the gateway mode.
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import { freePort } from '@subx/testing/free-port';

const probePath = fileURLToPath(new URL('../../deploy/docker/healthcheck.ts', import.meta.url));

type ProbeResult = { code: number; stderr: string };

function runProbe(args: string[], env: Record<string, string> = {}): Promise<ProbeResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--disable-warning=ExperimentalWarning', probePath, ...args],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 15_000 },
      (err, _stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ code, stderr });
      },
    );
  });
}

describe('healthcheck probe, gRPC mode', () => {
  const server = new grpc.Server();
  const health = new HealthImplementation({ '': 'SERVING', 'subx.extractor.v1.ExtractorService': 'SERVING' });
  let port = 0;

  beforeAll(async () => {
    health.addToServer(server);
    port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
  });
  afterAll(() => server.forceShutdown());

  it('exits 0 while the server reports SERVING', async () => {
    const result = await runProbe(['grpc', String(port)]);
    expect(result).toEqual({ code: 0, stderr: '' });
  });

  it('takes the port from GRPC_PORT when no argument is given', async () => {
    const result = await runProbe([], { SUBX_SERVICE: 'extractor', GRPC_PORT: String(port) });
    expect(result.code).toBe(0);
  });

  it('knows the default gRPC port of every gRPC image, the job service included', async () => {
    // Whatever answers on the default port (usually nothing here), the probe found a port to ask.
    for (const service of ['extractor', 'comments', 'ai', 'billing', 'jobs']) {
      const result = await runProbe([], { SUBX_SERVICE: service });
      expect(result.stderr, service).not.toMatch(/no valid port/);
    }
    const unknown = await runProbe([], { SUBX_SERVICE: 'no-such-service' });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no valid port/);
  });

  it('checks a named service when HEALTHCHECK_GRPC_SERVICE is set', async () => {
    const ok = await runProbe(['grpc', String(port)], {
      HEALTHCHECK_GRPC_SERVICE: 'subx.extractor.v1.ExtractorService',
    });
    expect(ok.code).toBe(0);
    const unknown = await runProbe(['grpc', String(port)], { HEALTHCHECK_GRPC_SERVICE: 'no.such.Service' });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/grpc-status 5/); // NOT_FOUND
  });

  it('exits 1 once the server flips to NOT_SERVING (shutdown started)', async () => {
    health.setStatus('', 'NOT_SERVING');
    try {
      const result = await runProbe(['grpc', String(port)]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('NOT_SERVING');
    } finally {
      health.setStatus('', 'SERVING');
    }
  });

  it('exits 1 when nothing listens on the port', async () => {
    const result = await runProbe(['grpc', String(await freePort())]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/unhealthy/);
  });
});

describe('healthcheck probe, HTTP mode (gateway)', () => {
  let ready = true;
  const paths: string[] = [];
  const server = http.createServer((req, res) => {
    paths.push(req.url ?? '');
    res.writeHead(req.url === '/health/ready' && ready ? 200 : 503).end();
  });
  let port = 0;

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('asks /health/ready and exits 0 on 200', async () => {
    const result = await runProbe([], { SUBX_SERVICE: 'gateway', PORT: String(port) });
    expect(result.code).toBe(0);
    expect(paths.at(-1)).toBe('/health/ready');
  });

  it('probes the dashboard on DASHBOARD_PORT, not PORT', async () => {
    const result = await runProbe([], { SUBX_SERVICE: 'dashboard', DASHBOARD_PORT: String(port), PORT: '1' });
    expect(result.code).toBe(0);
    expect(paths.at(-1)).toBe('/health/ready');
  });

  it('exits 1 on 503 (not ready or shutting down)', async () => {
    ready = false;
    try {
      const result = await runProbe(['http', String(port)]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('HTTP 503');
    } finally {
      ready = true;
    }
  });
});

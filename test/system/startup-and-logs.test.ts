/**
 * What a person sees when a service cannot start, and what the running system writes to its log,
 * from real processes: `npm start` (scripts/start-embedded.ts)
 * and each service's own main.ts.
 *
 * - a busy port is ONE line naming the port and the variable, exit code 1;
 * - every bad variable is listed at once (the service's schema together with YOUTUBE_*);
 * - one bad variable alone is one line: `<service>: Invalid configuration: VAR: what it expected`;
 * - the log has one access line per request, no key twice in a line, and never an API key.
 */
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeYouTube, videoIds } from '@subx/testing/fake-youtube';
import type { FakeYouTube } from '@subx/testing/fake-youtube';
import { duplicateKeys, jsonLines } from '@subx/testing/log-lines';
import { EMBEDDED_ENV, spawnLauncher } from '@subx/embedded/launcher';
import { runToExit } from './service-process.ts';

let busy: Server;
let busyPort = 0;
beforeAll(async () => {
  busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '0.0.0.0', resolve));
  busyPort = (busy.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise((resolve) => busy.close(resolve));
});

describe('a busy port is one line naming the port and the variable, exit 1', () => {
  const gatewaySecrets = {
    API_KEY_PEPPER: 'startup-test-pepper-0123456789abcdef0123',
    ADMIN_TOKEN: 'startup-test-admin-token-0123456789',
    LOG_LEVEL: 'silent',
  };
  it.each([
    ['npm start', 'scripts/start-embedded.ts', 'PORT', 'subx', {}],
    ['gateway', 'services/gateway/src/main.ts', 'PORT', 'gateway', gatewaySecrets],
    [
      'gateway admin',
      'services/gateway/src/main.ts',
      'ADMIN_PORT',
      'gateway',
      { ...gatewaySecrets, PORT: '0' },
    ],
    ['extractor', 'services/extractor/src/main.ts', 'GRPC_PORT', 'extractor', { LOG_LEVEL: 'silent' }],
    ['comments', 'services/comments/src/main.ts', 'GRPC_PORT', 'comments', { LOG_LEVEL: 'silent' }],
    ['ai', 'services/ai/src/main.ts', 'GRPC_PORT', 'ai', { LOG_LEVEL: 'silent' }],
    ['billing', 'services/billing/src/main.ts', 'GRPC_PORT', 'billing', { LOG_LEVEL: 'silent' }],
    ['npm start metrics', 'scripts/start-embedded.ts', 'METRICS_PORT', 'subx', { PORT: '0' }],
    [
      'extractor metrics',
      'services/extractor/src/main.ts',
      'METRICS_PORT',
      'extractor',
      { GRPC_PORT: '0', LOG_LEVEL: 'silent' },
    ],
  ] as const)(
    '%s',
    async (_name, script, variable, prefix, env) => {
      const result = await runToExit(script, { ...env, [variable]: String(busyPort) });
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr.trim()).toBe(
        `${prefix}: ${variable} ${busyPort} is already in use (set ${variable} to another port)`,
      );
      expect(result.stdout).not.toMatch(/EADDRINUSE|\n\s+at /);
    },
    90_000,
  );
});

describe('npm start checks every port before it starts anything', () => {
  let second: Server;
  let secondPort = 0;
  beforeAll(async () => {
    second = createServer();
    await new Promise<void>((resolve) => second.listen(0, '0.0.0.0', resolve));
    secondPort = (second.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => second.close(resolve));
  });

  it('two busy ports: one line naming both and their variables, exit 1, nothing started', async () => {
    const result = await runToExit('scripts/start-embedded.ts', {
      PORT: String(busyPort),
      ADMIN_PORT: '0',
      DASHBOARD_PORT: String(secondPort),
      METRICS_PORT: '0',
    });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toBe(
      `subx: PORT ${busyPort} and DASHBOARD_PORT ${secondPort} are already in use (set PORT and DASHBOARD_PORT to other ports)\n`,
    );
    expect(result.stderr).not.toMatch(/\bat /);
    expect(result.stdout).toBe('');
  }, 90_000);
});

describe('every bad variable is listed at once', () => {
  it('npm start: PORT=abc with a bad YOUTUBE_BASE_URL and LOG_LEVEL', async () => {
    const result = await runToExit('scripts/start-embedded.ts', {
      PORT: 'abc',
      YOUTUBE_BASE_URL: 'ftp://example.invalid',
      IP_RATE_LIMIT_PER_MINUTE: 'many',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Invalid configuration (3 problems)');
    expect(result.stderr).toMatch(/- PORT: must be an integer port/);
    expect(result.stderr).toMatch(/- YOUTUBE_BASE_URL: must be an http\(s\) URL/);
    expect(result.stderr).toMatch(/- IP_RATE_LIMIT_PER_MINUTE: must be a positive integer/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  }, 90_000);

  it('extractor: GRPC_PORT=abc with a bad YOUTUBE_BASE_URL and YOUTUBE_RETRIES', async () => {
    const result = await runToExit('services/extractor/src/main.ts', {
      GRPC_PORT: 'abc',
      YOUTUBE_BASE_URL: 'not a url',
      YOUTUBE_RETRIES: '99',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('extractor: Invalid configuration (3 problems)');
    expect(result.stderr).toMatch(/- GRPC_PORT: /);
    expect(result.stderr).toMatch(/- YOUTUBE_BASE_URL: /);
    expect(result.stderr).toMatch(/- YOUTUBE_RETRIES: /);
  }, 90_000);

  it('gateway: PORT=abc with the missing access secrets', async () => {
    const result = await runToExit('services/gateway/src/main.ts', { PORT: 'abc' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('gateway: Invalid configuration (3 problems)');
    expect(result.stderr).toMatch(/- PORT: /);
    expect(result.stderr).toMatch(/- API_KEY_PEPPER: is required/);
    expect(result.stderr).toMatch(/- ADMIN_TOKEN: is required/);
  }, 90_000);
});

describe('one bad variable is one line naming it and what it expected, exit 1, no stack', () => {
  const gatewaySecrets = {
    API_KEY_PEPPER: 'startup-test-pepper-0123456789abcdef0123',
    ADMIN_TOKEN: 'startup-test-admin-token-0123456789',
  };
  const duration = 'must be a positive duration in ms, or with a unit: 500ms, 10s, 2m, 1h, 7d';
  it.each([
    [
      'gateway',
      'services/gateway/src/main.ts',
      { ...gatewaySecrets, SHUTDOWN_TIMEOUT_MS: 'soon' },
      `SHUTDOWN_TIMEOUT_MS: ${duration}`,
    ],
    [
      'gateway',
      'services/gateway/src/main.ts',
      { ...gatewaySecrets, ACCESS_PRICING_JSON: '{"dailyLimits":{"pro":1}}' },
      'ACCESS_PRICING_JSON: Unrecognized key: "dailyLimits"',
    ],
    [
      'billing',
      'services/billing/src/main.ts',
      { CREDIT_USAGE_TOPIC: ' ' },
      'CREDIT_USAGE_TOPIC: must not be blank',
    ],
    [
      'dashboard',
      'services/dashboard/src/main.ts',
      { ADMIN_TOKEN: gatewaySecrets.ADMIN_TOKEN, METRICS_PORT: 'nine' },
      'METRICS_PORT: must be a port number (0-65535) or "off"',
    ],
    [
      'extractor',
      'services/extractor/src/main.ts',
      { YOUTUBE_RETRIES: '11' },
      'YOUTUBE_RETRIES: must be an integer between 0 and 10',
    ],
    // Every service's loader reads it: reported once.
    ['subx', 'scripts/start-embedded.ts', { SHUTDOWN_TIMEOUT_MS: '-1' }, `SHUTDOWN_TIMEOUT_MS: ${duration}`],
  ] as const)(
    '%s: %j',
    async (prefix, script, env, problem) => {
      const result = await runToExit(script, { LOG_LEVEL: 'silent', ...env });
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr.trim()).toBe(`${prefix}: Invalid configuration: ${problem}`);
      expect(result.stdout).toBe('');
    },
    90_000,
  );
});

describe('the log of a running npm start', () => {
  let youtube: FakeYouTube;
  beforeAll(async () => {
    youtube = await startFakeYouTube();
  });
  afterAll(async () => {
    await youtube?.close();
  });

  it('one access line per request, no key twice in any line, never an API key', async () => {
    const launcher = spawnLauncher([], { ...EMBEDDED_ENV, LOG_LEVEL: 'info', YOUTUBE_BASE_URL: youtube.url });
    try {
      const banner = await launcher.waitFor(
        /subx is running at (http:\/\/\S+)[\s\S]*pro API key:\s+(sxk_v1_[A-Za-z0-9]{32})/,
        60_000,
      );
      const [base, key] = [banner[1]!, banner[2]!];
      const ok = await fetch(`${base}/api/v1/extract`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ url: `https://youtu.be/${videoIds.manualAndAuto}` }),
      });
      expect(ok.status).toBe(200);
      const pasted = await fetch(`${base}/api/v1/validate?url=${key}`);
      expect(pasted.status).toBe(400);
      await new Promise((r) => setTimeout(r, 300));
      const lines = jsonLines(launcher.output());
      for (const line of lines) expect(duplicateKeys(line), line).toEqual([]);
      const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      for (const response of [ok, pasted]) {
        const id = response.headers.get('x-request-id');
        const access = parsed.filter((l) => l.msg === 'request' && l.request_id === id);
        expect(access, id ?? '').toHaveLength(1);
        expect(access[0]).toMatchObject({ service: 'gateway', status: response.status });
      }
      // The banner prints the key once, on purpose; the log never does.
      expect(lines.join('\n')).not.toContain(key.slice(7));
      expect(lines.join('\n')).toContain('sxk_v1_[redacted]');
      expect(parsed.some((l) => l.msg === 'incoming request')).toBe(false);
    } finally {
      await launcher.stop();
    }
  }, 120_000);
});

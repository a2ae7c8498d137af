/**
 * The no-network preload: a process started with it reaches loopback and nothing else, whether by
 * fetch (undici), http, TLS or a DNS lookup, and notes every host it refused.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';

const preload = fileURLToPath(new URL('../src/no-network.ts', import.meta.url));
const local = createServer((_req, res) => res.end('local'));
let dir = '';
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'subx-no-network-'));
  await new Promise<void>((resolve) => local.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  await new Promise((resolve) => local.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `code` (an ES module body printing one JSON line) under the preload. */
function underPreload(code: string, log: string): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', preload, '--input-type=module', '-e', code],
      { env: { ...process.env, NO_NETWORK_LOG: log }, timeout: 30_000 },
      (error, stdout) => (error ? reject(error) : resolve(JSON.parse(stdout) as Record<string, string>)),
    );
  });
}

it('refuses every host but loopback, by fetch, http, TLS and DNS, and notes each one', async () => {
  const log = join(dir, 'refused');
  const { port } = local.address() as AddressInfo;
  const out = await underPreload(
    `import dns from 'node:dns'; import http from 'node:http'; import tls from 'node:tls';
     const code = (p) => p.then(() => 'ok', (e) => e.cause?.code ?? e.code);
     const result = {
       loopback: await fetch('http://127.0.0.1:${port}/').then((r) => r.text()),
       fetchName: await code(fetch('https://rr1---sn-x.googlevideo.com/videoplayback')),
       fetchAddress: await code(fetch('http://10.1.2.3:8080/')),
       http: await code(new Promise((ok, no) => http.get('http://example.org/', ok).on('error', no))),
       tls: await code(new Promise((ok, no) => tls.connect(443, 'www.youtube.com', ok).on('error', no))),
       dns: await code(dns.promises.lookup('api.openai.com')),
     };
     console.log(JSON.stringify(result));`,
    log,
  );
  expect(out).toEqual({
    loopback: 'local',
    fetchName: 'ECONNREFUSED',
    fetchAddress: 'ECONNREFUSED',
    // http's agent asks DNS itself first
    http: 'ENOTFOUND',
    tls: 'ECONNREFUSED',
    dns: 'ENOTFOUND',
  });
  expect(readFileSync(log, 'utf8').trim().split('\n')).toEqual([
    'rr1---sn-x.googlevideo.com',
    '10.1.2.3',
    'example.org',
    'www.youtube.com',
    'api.openai.com',
  ]);
});

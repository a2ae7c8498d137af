/**
 * POST /api/v1/extract on the images under docker compose, as `bash scripts/containers.sh up` runs
 * them (gateway, extractor, Redis, Kafka, MongoDB, the demo platform), against a bare fastify route
 * serving the same bytes from a container of the same image on the same network, loaded in the
 * same run by autocannon from this machine.
 *
 *   node_modules/.bin/node scripts/bench/compose-extract.ts [--duration 10] [--rounds 3]
 *     [--connections 50] [--video ID] [--skip-up] [--env KEY=VALUE ...]
 *
 * The stack's own gateway is left alone: the benchmark starts two more from the compose service
 * (`compose run --no-deps`: the image, environment and network of `gateway`), one with the defaults
 * (the micro-cache answers: the cached path) and one with `EXTRACT_CACHE_TTL_MS=0` (every request
 * crosses the gRPC hop to the extractor container, which answers from Redis: the uncached path).
 * Both get a pro daily limit the load cannot use up (ACCESS_PRICING_JSON); the load runs on an account
 * of its own, made through the admin API (the stack's ADMIN_TOKEN) and its key revoked at the end, so
 * the demo account's daily count in the stack's Redis is left alone. Everything is loaded at its
 * container address, the bare route too, so no path pays Docker's port-publishing proxy. The
 * answers are the demo platform's recorded videos, so their size is the video's, not a choice.
 * Figures only: the targets are on `npm start` (npm-start-extract.ts).
 */
import { execFile } from 'node:child_process';
import { parseArgs } from 'node:util';
import { PATHS, TABLE_HEADER, figures, measureRounds, tableRow } from './extract-load.ts';
import type { Target } from './extract-load.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: process.env.BENCH_DURATION_S ?? '10' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    video: { type: 'string', default: 'it3OtbTxQk0' },
    'skip-up': { type: 'boolean', default: false },
    /** KEY=VALUE added to both benchmark gateways (repeatable), e.g. OTEL_TRACES_SAMPLER=always_off. */
    env: { type: 'string', multiple: true, default: [] },
  },
});
const DURATION = Number(values.duration);
const ROUNDS = Number(values.rounds);
const CONNECTIONS = Number(values.connections);

const PRICING = JSON.stringify({ dailyLimit: { pro: 1_000_000_000 } });
const NAMES = { cached: 'subx-bench-cached', uncached: 'subx-bench-uncached', bare: 'subx-bench-bare' };
const READY_TIMEOUT_MS = 90_000;
const EXTRA_ENV = Object.fromEntries(
  values.env.map((pair) => {
    const at = pair.indexOf('=');
    if (at < 1) throw new Error(`--env takes KEY=VALUE, not "${pair}"`);
    return [pair.slice(0, at), pair.slice(at + 1)];
  }),
);

function run(file: string, args: string[], timeoutMs: number, env: Record<string, string> = {}) {
  return new Promise<string>((resolve, reject) => {
    execFile(
      file,
      args,
      { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, ...env } },
      (error, stdout, stderr) =>
        error ? reject(new Error(`${file} ${args.join(' ')}: ${stderr || error.message}`)) : resolve(stdout),
    );
  });
}

/** The project's compose CLI on the project's files (what scripts/containers.sh uses). */
const compose = (args: string[], timeoutMs = 120_000) =>
  run(
    'bash',
    ['scripts/containers.sh', 'compose', '--profile', 'demo', '--profile', 'apps', ...args],
    timeoutMs,
    {
      YOUTUBE_BASE_URL: 'http://demo-youtube:8079',
    },
  );

async function addressOf(name: string): Promise<string> {
  const ip = (
    await run(
      'docker',
      ['inspect', '-f', '{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}', name],
      30_000,
    )
  )
    .trim()
    .split(' ')[0];
  if (!ip) throw new Error(`container ${name} has no address`);
  return ip;
}

async function waitUntilAnswers(url: string, init: RequestInit = {}): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    try {
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(5_000) });
      if (res.status < 500) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer within ${READY_TIMEOUT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

const removeAll = () => run('docker', ['rm', '-f', ...Object.values(NAMES)], 60_000).catch(() => '');

/** A gateway of the compose service with `env` added, started without its dependencies (they run). */
async function startGateway(name: string, env: Record<string, string>): Promise<string> {
  const envArgs = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  await compose(['run', '-d', '--no-deps', '--name', name, ...envArgs, 'gateway']);
  const base = `http://${await addressOf(name)}:8080`;
  await waitUntilAnswers(`${base}/health/ready`);
  return base;
}

/** The bare route: fastify from the gateway image, answering the captured bytes. */
const BARE_SCRIPT = `
import Fastify from 'fastify';
const body = process.env.BARE_BODY;
const app = Fastify();
app.post('/api/v1/extract', async (_request, reply) => reply.type('application/json').send(body));
await app.listen({ host: '0.0.0.0', port: 8080 });
process.on('SIGTERM', () => process.exit(0));
`;

interface BenchAccount {
  id: string;
  apiKey: string;
  /** Revokes the key (the account stays, as every account does). */
  close(): Promise<void>;
}

/** A pro account for the load, through the admin API of a benchmark gateway (port 8081). */
async function createAccount(gatewayName: string): Promise<BenchAccount> {
  const env = await run(
    'docker',
    ['inspect', '-f', '{{range .Config.Env}}{{println .}}{{end}}', gatewayName],
    30_000,
  );
  const token = /^ADMIN_TOKEN=(.+)$/m.exec(env)?.[1];
  if (!token) throw new Error(`${gatewayName} has no ADMIN_TOKEN`);
  const admin = `http://${await addressOf(gatewayName)}:8081/admin/v1/accounts`;
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const res = await fetch(admin, {
    method: 'POST',
    headers,
    body: JSON.stringify({ tier: 'pro' }),
    signal: AbortSignal.timeout(30_000),
  });
  if (res.status !== 201)
    throw new Error(`creating the benchmark account answered ${res.status}: ${await res.text()}`);
  const created = (await res.json()) as { account_id: string; api_key: string };
  return {
    id: created.account_id,
    apiKey: created.api_key,
    close: async () => {
      await fetch(`${admin}/${created.account_id}/api-key`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(30_000),
      });
    },
  };
}

async function extractOnce(base: string, body: string, apiKey: string): Promise<string> {
  const res = await fetch(`${base}/api/v1/extract`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
    body,
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`extract answered ${res.status}: ${text.slice(0, 300)}`);
  return text;
}

async function main(): Promise<void> {
  if (!values['skip-up']) {
    console.error(
      'compose-extract: bash scripts/containers.sh up (builds what is missing, waits until healthy)',
    );
    await run('bash', ['scripts/containers.sh', 'up'], 30 * 60_000);
  }
  await removeAll();
  let account: BenchAccount | undefined;
  try {
    const [cached, uncached] = await Promise.all([
      startGateway(NAMES.cached, { ...EXTRA_ENV, ACCESS_PRICING_JSON: PRICING }),
      startGateway(NAMES.uncached, { ...EXTRA_ENV, ACCESS_PRICING_JSON: PRICING, EXTRACT_CACHE_TTL_MS: '0' }),
    ]);
    account = await createAccount(NAMES.cached);
    const apiKey = account.apiKey;
    const body = JSON.stringify({ url: `https://www.youtube.com/watch?v=${values.video}` });
    await extractOnce(uncached, body, apiKey);
    await extractOnce(cached, body, apiKey);
    const answer = await extractOnce(cached, body, apiKey);
    const segments = (JSON.parse(answer) as { subtitles?: unknown[] }).subtitles?.length ?? 0;

    await compose([
      'run',
      '-d',
      '--no-deps',
      '--name',
      NAMES.bare,
      '-e',
      `BARE_BODY=${answer}`,
      '--entrypoint',
      'node',
      'gateway',
      '--input-type=module',
      '-e',
      BARE_SCRIPT,
    ]);
    const bare = `http://${await addressOf(NAMES.bare)}:8080`;
    await waitUntilAnswers(`${bare}/api/v1/extract`, { method: 'POST', body: '{}' });

    const targets: Record<'bare' | 'cached' | 'uncached', Target> = {
      bare: { url: `${bare}/api/v1/extract`, headers: {} },
      cached: { url: `${cached}/api/v1/extract`, headers: { 'x-api-key': apiKey } },
      uncached: { url: `${uncached}/api/v1/extract`, headers: { 'x-api-key': apiKey } },
    };
    const rounds = await measureRounds(targets, body, {
      rounds: ROUNDS,
      duration: DURATION,
      warmup: 2,
      connections: CONNECTIONS,
    });
    console.log(
      `\nPOST /api/v1/extract on the compose stack's images (gateway and extractor containers, Redis), ` +
        `${CONNECTIONS} connections, ${DURATION} s per run, ${ROUNDS} round(s); ratio to a bare fastify ` +
        `route in a container of the gateway image serving the same bytes\n`,
    );
    console.log(TABLE_HEADER);
    let failed = 0;
    const label = `${values.video}, ${segments} segments (${(Buffer.byteLength(answer) / 1024).toFixed(1)} KiB)`;
    for (const path of PATHS) {
      const f = figures(rounds, path);
      failed += f.failed;
      console.log(tableRow(label, path, f, '(figures only)'));
    }
    if (failed > 0) {
      console.log(`\ncompose-extract: ${failed} requests failed`);
      process.exitCode = 1;
    }
  } finally {
    await account?.close().catch((err: unknown) => console.error('revoking the benchmark key failed', err));
    await removeAll();
  }
}

await main();

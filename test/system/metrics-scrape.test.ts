/**
 * The metrics of a running system, as an operator sees them: the real `npm start` launcher as a
 * child process (fake YouTube upstream), one extract and one batch over HTTP, then `/metrics`
 * scraped from its own port. The key series must move from a scrape taken before the traffic, no
 * label may carry a video, account or key id, and the exposition must pass `promtool check
 * metrics` (promtool is built by scripts/validate-deploy.sh; without it this part is skipped with a
 * notice, and fails under CI=true).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeYouTube, videoIds, type FakeYouTube } from '@subx/testing/fake-youtube';
import { startNpmStart, type NpmStartProcess } from './npm-start-process.ts';

let youtube: FakeYouTube;
let system: NpmStartProcess;
let base = '';
let metricsUrl = '';
let apiKey = '';
let accountId = '';

/** Sum of the samples of `name` whose labels include every given label (exposition text). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!match || match[1] !== name) continue;
    const set = match[2] ?? '';
    if (Object.entries(labels).every(([k, v]) => set.includes(`${k}="${v}"`))) total += Number(match[3]);
  }
  return total;
}

const scrape = async (): Promise<string> => {
  const res = await fetch(metricsUrl);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text();
};

const post = (path: string, body: unknown) =>
  fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
    body: JSON.stringify(body),
  });

function findPromtool(): string | undefined {
  const candidates = [
    process.env.PROMTOOL,
    join(process.env.SUBX_TOOLS_DIR ?? join(homedir(), '.cache', 'subx-tools'), 'bin', 'promtool'),
  ];
  return candidates.find((path): path is string => Boolean(path) && existsSync(path!));
}

beforeAll(async () => {
  youtube = await startFakeYouTube();
  // A small per-address limit, so the rate-limit rejection counter can be driven in a few calls.
  system = await startNpmStart({ YOUTUBE_BASE_URL: youtube.url, IP_RATE_LIMIT_PER_MINUTE: '3' });
  ({ base, apiKey, accountId } = system);
  metricsUrl = system.metricsUrl ?? '';
  expect(metricsUrl, system.output()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
}, 90_000);

afterAll(async () => {
  await system?.stop();
  await youtube?.close();
});

describe('metrics of npm start', () => {
  let before = '';
  let after = '';

  it('serves /metrics on its own port, and only /metrics', async () => {
    expect(new URL(metricsUrl).port).not.toBe(new URL(base).port);
    before = await scrape();
    expect((await fetch(metricsUrl.replace(/\/metrics$/, '/'))).status).toBe(404);
    // ...and the public API does not serve it.
    expect((await fetch(`${base}/metrics`)).status).toBe(404);
  });

  it('one extract and one batch move requests, upstream outcomes, cache hits, credits and the bus', async () => {
    const url = `https://youtu.be/${videoIds.manualAndAuto}`;
    expect((await post('/api/v1/extract', { url })).status).toBe(200);
    const batch = await post('/api/v1/batch', { urls: [url, `https://youtu.be/${videoIds.private}`] });
    expect(batch.status).toBe(200);

    // Billing applies the credit-usage event asynchronously (outbox relay → bus → ledger).
    const deadline = Date.now() + 20_000;
    do {
      after = await scrape();
      if (sample(after, 'subx_billing_events_total', { result: 'applied' }) >= 1) break;
      await new Promise((r) => setTimeout(r, 200));
    } while (Date.now() < deadline);

    const moved = (name: string, labels: Record<string, string> = {}) =>
      sample(after, name, labels) - sample(before, name, labels);
    expect(moved('subx_http_requests_total', { route: '/api/v1/extract', status_class: '2xx' })).toBe(1);
    expect(moved('subx_http_requests_total', { route: '/api/v1/batch', status_class: '2xx' })).toBe(1);
    expect(moved('subx_http_request_duration_seconds_count', { route: '/api/v1/batch' })).toBe(1);
    expect(moved('subx_upstream_requests_total', { component: 'extractor', outcome: 'ok' })).toBeGreaterThan(
      0,
    );
    expect(
      moved('subx_upstream_request_duration_seconds_count', { upstream_endpoint: 'player' }),
    ).toBeGreaterThan(0);
    // The batch's first item is the video the extract just cached.
    expect(moved('subx_cache_requests_total', { cache: 'transcript', result: 'miss' })).toBeGreaterThan(0);
    expect(moved('subx_cache_requests_total', { cache: 'transcript', result: 'hit' })).toBeGreaterThan(0);
    expect(moved('subx_credits_total', { operation: 'batch', action: 'reserved' })).toBe(2);
    expect(moved('subx_credits_total', { operation: 'batch', action: 'charged' })).toBe(1);
    expect(moved('subx_credits_total', { operation: 'batch', action: 'released' })).toBe(1);
    expect(
      moved('subx_grpc_server_handled_total', { grpc_method: 'GetTranscript', grpc_code: 'OK' }),
    ).toBeGreaterThan(0);
    expect(moved('subx_grpc_client_handled_total', { grpc_method: 'GetTranscript' })).toBeGreaterThan(0);
    expect(moved('subx_bus_messages_produced_total', { topic: 'extract.jobs.v1' })).toBe(2);
    expect(moved('subx_bus_messages_consumed_total', { topic: 'extract.jobs.v1', outcome: 'ok' })).toBe(2);
    expect(moved('subx_billing_events_total', { result: 'applied' })).toBe(1);
    expect(
      sample(after, 'subx_upstream_circuit_breaker_state', { component: 'extractor', state: 'closed' }),
    ).toBe(1);
    expect(sample(after, 'subx_outbox_pending')).toBe(0);
    expect(after).toMatch(
      /^subx_kafka_consumer_lag\{group="extractor-workers",topic="extract.jobs.v1"\} 0$/m,
    );
    // npm start runs the bulk workers too, in their own group on their own topic.
    expect(after).toMatch(
      /^subx_kafka_consumer_lag\{group="extractor-bulk-workers",topic="extract.bulk-jobs.v1"\} 0$/m,
    );
    // Process metrics.
    for (const name of [
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_heap_size_used_bytes',
      'process_cpu_seconds_total',
    ]) {
      expect(after).toMatch(new RegExp(`^${name} `, 'm'));
    }
  });

  it('counts rate-limit rejections by tier, and the 429s under their route', async () => {
    const start = await scrape();
    const url = `${base}/api/v1/validate?url=${encodeURIComponent(`https://youtu.be/${videoIds.manualAndAuto}`)}`;
    let rejected = 0;
    // 3 per minute per address: at most 7 calls reach a 429 even across a minute boundary.
    for (let i = 0; i < 7 && rejected === 0; i++) {
      const res = await fetch(url);
      if (res.status === 429) rejected += 1;
      else expect(res.status).toBe(200);
    }
    expect(rejected).toBe(1);
    const end = await scrape();
    const moved = (name: string, labels: Record<string, string>) =>
      sample(end, name, labels) - sample(start, name, labels);
    expect(moved('subx_rate_limit_rejections_total', { tier: 'anonymous', limit: 'per_ip_minute' })).toBe(1);
    expect(moved('subx_http_requests_total', { route: '/api/v1/validate', status_class: '4xx' })).toBe(1);
  });

  it('no label carries a video, account or key id', () => {
    for (const id of [videoIds.manualAndAuto, videoIds.private, accountId, apiKey]) {
      expect(after.includes(id), id).toBe(false);
    }
  });

  it('the scrape passes promtool check metrics', () => {
    const promtool = findPromtool();
    if (!promtool) {
      const message = 'promtool not found (run scripts/validate-deploy.sh, or set PROMTOOL)';
      if (process.env.CI === 'true') throw new Error(message);
      console.warn(`SKIPPED: ${message}`);
      return;
    }
    const result = spawnSync(promtool, ['check', 'metrics'], {
      input: after,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(result.stderr + result.stdout).toBe('');
    expect(result.status).toBe(0);
  });
});

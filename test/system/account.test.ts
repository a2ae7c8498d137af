/**
 * Black-box: what a pipeline budgets with, on the real `npm start` against the fake platform. The
 * account (GET /api/v1/account) moves by exactly one request and the extract's price after one
 * extract, and by nothing when read; a job's dry run estimates without creating or charging; and a
 * real job holds each video once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeYouTube, videoIds } from '@subx/testing/fake-youtube';
import type { FakeYouTube } from '@subx/testing/fake-youtube';
import { startNpmStart } from './npm-start-process.ts';
import type { NpmStartProcess } from './npm-start-process.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/** Extract priced at 2 credits here, so the balance visibly moves by what an extract costs. */
const EXTRACT_PRICE = 2;
const VIDEO = videoIds.manualAndAuto;

let youtube: FakeYouTube;
let system: NpmStartProcess;

async function call(path: string, body?: unknown) {
  const response = await fetch(`${system.base}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      'x-api-key': system.apiKey,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Json };
}

beforeAll(async () => {
  youtube = await startFakeYouTube();
  system = await startNpmStart({
    YOUTUBE_BASE_URL: youtube.url,
    JOBS_POLL_MS: '100',
    ACCESS_PRICING_JSON: JSON.stringify({ prices: { extract: EXTRACT_PRICE } }),
  });
}, 90_000);

afterAll(async () => {
  await system?.stop();
  await youtube?.close();
});

describe('GET /api/v1/account on npm start', () => {
  it('shows exactly one more request and the extract’s price after one extract', async () => {
    const before = await call('/api/v1/account');
    expect(before.status, JSON.stringify(before.body)).toBe(200);
    expect(before.body).toMatchObject({ tier: 'pro', request_id: expect.any(String) });
    // Reading it is free and not counted.
    const again = await call('/api/v1/account');
    expect(again.body).toMatchObject({
      credits_balance: before.body.credits_balance,
      daily_used: before.body.daily_used,
    });

    const extract = await call('/api/v1/extract', { url: `https://www.youtube.com/watch?v=${VIDEO}` });
    expect(extract.status, JSON.stringify(extract.body)).toBe(200);

    const after = await call('/api/v1/account');
    expect(after.body.daily_used).toBe(before.body.daily_used + 1);
    expect(after.body.credits_balance).toBe(before.body.credits_balance - EXTRACT_PRICE);
  });

  it('a dry run estimates without creating or charging; a real job holds each video once', async () => {
    const urls = [
      `https://youtu.be/${VIDEO}`,
      `https://www.youtube.com/watch?v=${VIDEO}&t=5`,
      `https://www.youtube.com/shorts/${VIDEO}`,
    ];
    const before = await call('/api/v1/account');
    const jobsBefore = (await call('/api/v1/jobs')).body.jobs.length;
    const dry = await call('/api/v1/jobs', { dry_run: true, source: { type: 'urls', urls } });
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    expect(dry.body.estimate).toEqual({ items: 1, credits_max: 1, duplicates_removed: 2 });
    expect((await call('/api/v1/jobs')).body.jobs).toHaveLength(jobsBefore);
    expect((await call('/api/v1/account')).body.credits_balance).toBe(before.body.credits_balance);

    const created = await call('/api/v1/jobs', { source: { type: 'urls', urls } });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    expect(created.body.progress.total).toBe(1);
  });
});

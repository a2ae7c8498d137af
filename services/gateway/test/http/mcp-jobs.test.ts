/**
 * The account and bulk job tools through the SDK's client over a real socket, on the jobs harness
 * (jobs-support.ts): each runs its HTTP twin through the real route, with the same key, limits and
 * credits.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { DEFAULT_PRICING } from '@subx/credits';
import { KEYS, VIDEO_URL } from './support.ts';
import { REAL, jobsGateway, watch } from './jobs-support.ts';
import type { JobsHarness } from './jobs-support.ts';

type Result = {
  isError?: boolean;
  content: { type: string; text: string }[];
  structuredContent?: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
};

const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

async function connect(h: JobsHarness, key: string = KEYS.pro) {
  const base = (await h.app.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1');
  const client = new Client({ name: 't', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  );
  clients.push(client);
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: args })) as Result;
  return { client, call };
}

describe('MCP account and job tools', () => {
  it('get_account answers the key’s standing; an extract moves it by one request and its credits', async () => {
    const h = await jobsGateway();
    const { call } = await connect(h);
    const before = await call('get_account');
    expect(before.isError).toBeFalsy();
    expect(before.structuredContent).toMatchObject({
      tier: 'pro',
      credits_balance: 100,
      daily_limit: DEFAULT_PRICING.dailyLimit.pro,
      jobs: { max_items: DEFAULT_PRICING.jobMaxItems.pro },
    });
    expect(before.content[0]!.text).toContain('100 credits available');
    // Reading the account counts nothing.
    expect((await call('get_account')).structuredContent!.daily_used).toBe(
      before.structuredContent!.daily_used,
    );
    const transcript = await call('get_transcript', { url: VIDEO_URL });
    expect(transcript.isError).toBeFalsy();
    const after = await call('get_account');
    expect(after.structuredContent!.daily_used).toBe(before.structuredContent!.daily_used + 1);
    // The balance moves by exactly extract's price (account.test.ts sets it non-zero).
    expect(after.structuredContent!.credits_balance).toBe(
      before.structuredContent!.credits_balance - DEFAULT_PRICING.prices.extract,
    );
  });

  it('estimate_job is a dry run: the estimate, nothing created or charged', async () => {
    const h = await jobsGateway();
    const { call } = await connect(h);
    const urls = [`https://youtu.be/${REAL[0]}`, `${watch(REAL[0]!)}&t=5`, watch(REAL[1]!)];
    const r = await call('estimate_job', { source: { type: 'urls', urls } });
    expect(r.isError, r.content[0]?.text).toBeFalsy();
    expect(r.structuredContent!.estimate).toEqual({ items: 2, credits_max: 2, duplicates_removed: 1 });
    expect(r.content[0]!.text).toContain('2 items');
    expect(h.ledger.reservations).toEqual([]);
    expect(h.events).toEqual([]);
  });

  it('create_job starts the job, get_job follows it, get_job_results pages its results', async () => {
    const h = await jobsGateway();
    const { call } = await connect(h);
    const created = await call('create_job', {
      source: { type: 'urls', urls: REAL.slice(0, 3).map(watch) },
      idempotency_key: 'mcp-job-0001',
    });
    expect(created.isError, created.content[0]?.text).toBeFalsy();
    const jobId = created.structuredContent!.job_id as string;
    expect(created.structuredContent).toMatchObject({ status: 'queued', progress: { total: 3 } });
    // The same idempotency_key replays the job: still one job.
    const again = await call('create_job', {
      source: { type: 'urls', urls: REAL.slice(0, 3).map(watch) },
      idempotency_key: 'mcp-job-0001',
    });
    expect(again.structuredContent!.job_id).toBe(jobId);

    await h.drain();
    const job = await call('get_job', { job_id: jobId });
    expect(job.structuredContent).toMatchObject({
      job_id: jobId,
      status: 'completed',
      progress: { succeeded: 3 },
      credits_charged: 3,
    });
    expect(job.content[0]!.text).toContain('get_job_results');
    expect(h.ledger.balances.get('acc_pro')).toBe(97);

    const first = await call('get_job_results', { job_id: jobId, limit: 2 });
    expect(first.isError, first.content[0]?.text).toBeFalsy();
    expect((first.structuredContent!.results as { index: number }[]).map((r) => r.index)).toEqual([0, 1]);
    const cursor = first.structuredContent!.next_cursor as string;
    expect(first.content[0]!.text).toContain(`cursor "${cursor}"`);
    const second = await call('get_job_results', { job_id: jobId, limit: 2, cursor });
    expect((second.structuredContent!.results as { index: number }[]).map((r) => r.index)).toEqual([2]);

    const missing = await call('get_job', { job_id: 'job_aaaaaaaaa0123456789abcdef' });
    expect(missing.isError).toBe(true);
    expect(missing.content[0]!.text).toMatch(/^JOB_NOT_FOUND/);
  });

  it('the free tier gets the route’s own 403 from create_job and estimate_job', async () => {
    const h = await jobsGateway();
    const { call } = await connect(h, KEYS.free);
    for (const name of ['create_job', 'estimate_job']) {
      const r = await call(name, { source: { type: 'urls', urls: [watch(REAL[0]!)] } });
      expect(r.isError).toBe(true);
      expect(r.content[0]!.text).toMatch(/^TIER_REQUIRED/);
    }
  });
});

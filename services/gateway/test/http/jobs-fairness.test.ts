/**
 * One account cannot stall everyone's bulk jobs: the runner takes accounts in turn (an account at
 * its running cap never hides the accounts behind it), each tier has a cap on jobs waiting to
 * start, and a job that waits too long expires unstarted with nothing charged.
 */
import { describe, expect, it } from 'vitest';
import { KEYS } from './support.ts';
import { REAL, auth, createJob, jobsGateway, watch } from './jobs-support.ts';

const oneVideo = { source: { type: 'urls', urls: [watch(REAL[0]!)] } };

async function jobOf(h: Awaited<ReturnType<typeof jobsGateway>>, id: string, key: string) {
  return (await h.app.inject({ method: 'GET', url: `/api/v1/jobs/${id}`, headers: auth(key) })).json() as {
    status: string;
    started_at: string | null;
    credits_charged: number;
    error: { code: string; message: string } | null;
  };
}

describe('bulk jobs across accounts', () => {
  it('starts another account’s job on the first poll while one account has 40 queued', async () => {
    const h = await jobsGateway();
    for (let i = 0; i < 40; i++) expect((await createJob(h, oneVideo, KEYS.enterprise)).statusCode).toBe(202);
    const other = (await createJob(h, oneVideo, KEYS.pro)).json().job_id as string;
    // The bound: one poll of the runner (JOBS_POLL_MS, 1 s by default) after its creation.
    await h.runner.pollOnce();
    expect((await jobOf(h, other, KEYS.pro)).started_at).not.toBeNull();
    await h.runner.idle();
  });

  it('refuses a job past the tier’s cap of jobs waiting to start, with 429 and Retry-After', async () => {
    const h = await jobsGateway();
    for (let i = 0; i < 20; i++) expect((await createJob(h, oneVideo, KEYS.pro)).statusCode).toBe(202);
    const refused = await createJob(h, oneVideo, KEYS.pro);
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.json()).toMatchObject({ error: { code: 'RATE_LIMITED', max_queued: 20 } });
    // Another account is not affected.
    expect((await createJob(h, oneVideo, KEYS.pro2)).statusCode).toBe(202);
  });

  it('expires a job that waited past JOBS_QUEUED_TTL_MS: failed, nothing charged, event sent', async () => {
    const h = await jobsGateway({ env: { JOBS_QUEUED_TTL_MS: '1h' } });
    const id = (await createJob(h, oneVideo, KEYS.pro)).json().job_id as string;
    h.clock.advance(3_600_001);
    await h.runner.pollOnce();
    await h.runner.idle();
    const job = await jobOf(h, id, KEYS.pro);
    expect(job).toMatchObject({ status: 'failed', started_at: null, credits_charged: 0 });
    expect(job.error?.code).toBe('JOB_QUEUE_EXPIRED');
    expect(h.events.some((e) => e.type === 'job.failed' && e.job._id === id)).toBe(true);
    expect(h.backends.calls.filter((c) => c.method === 'getTranscript')).toHaveLength(0);
  });
});

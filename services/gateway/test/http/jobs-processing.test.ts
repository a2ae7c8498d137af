/**
 * A job item whose stream is still live or being processed (VIDEO_PROCESSING) through the real
 * routes and runner (jobs-support.ts): parked, not failed, asked again after its Retry-After,
 * nothing charged meanwhile, the parked state kept across runners, and ended with VIDEO_PROCESSING
 * once the job has waited JOB_PROCESSING_WAIT_MS.
 */
import { describe, expect, it } from 'vitest';
import { Errors } from '@subx/errors';
import { KEYS, transcript } from './support.ts';
import { REAL, allResults, auth, createJob, getJob, jobsGateway, watch } from './jobs-support.ts';
import type { JobsHarness } from './jobs-support.ts';

const stream = REAL[0]!;
const vod = REAL[1]!;

/** Makes `stream` answer VIDEO_PROCESSING post_live while `processing()` says so; counts its calls. */
function streamInProcessing(h: JobsHarness, processing: () => boolean) {
  const calls = { stream: 0 };
  h.backends.handlers.getTranscript = async (req) => {
    if (req.videoId === stream) {
      calls.stream += 1;
      if (processing()) throw Errors.videoProcessing(stream, 'post_live');
    }
    return transcript(req.videoId);
  };
  return calls;
}

async function runOnce(h: JobsHarness, runner = h.runner) {
  await runner.pollOnce();
  await runner.idle();
}

describe('a job item whose stream is still being processed', () => {
  it('is parked until its Retry-After, then succeeds on another runner, charged only then', async () => {
    const h = await jobsGateway();
    let processing = true;
    const calls = streamInProcessing(h, () => processing);
    const id = (await createJob(h, { source: { type: 'urls', urls: [stream, vod].map(watch) } })).json()
      .job_id;
    await runOnce(h);

    // One ask only (not JOB_ITEM_ATTEMPTS tries seconds apart); the other item is done and charged.
    expect(calls.stream).toBe(1);
    expect(await getJob(h, id)).toMatchObject({
      status: 'running',
      progress: { total: 2, succeeded: 1, failed: 0, pending: 1 },
      credits_charged: 1,
    });
    expect((await h.store.resultsBetween(id, 0, 2)).map((r) => r.index)).toEqual([1]);
    // No runner holds it while it waits: the lease is free when the item is due (Retry-After 300 s).
    const waiting = await h.store.byId(id);
    expect(waiting).toMatchObject({ lease_owner: null, lease_until: h.clock.now() + 300_000 });
    expect(waiting?.parked).toEqual({ '0': h.clock.now() + 300_000 });
    expect(h.runner.running()).toBe(0);

    // Not due yet: nobody asks.
    h.clock.advance(299_000);
    await runOnce(h);
    expect(calls.stream).toBe(1);

    // Due, and processed by now: another runner (the first one gone) picks it up from the store.
    processing = false;
    h.clock.advance(1_001);
    const other = h.newRunner('runner-b');
    await runOnce(h, other);
    expect(calls.stream).toBe(2);
    expect(await getJob(h, id)).toMatchObject({
      status: 'completed',
      progress: { total: 2, succeeded: 2, failed: 0, pending: 0 },
      credits_charged: 2,
    });
    expect(h.ledger.balances.get('acc_pro')).toBe(98);
    expect((await allResults(h, id, 10)).map((r) => [r.index, r.success])).toEqual([
      [0, true],
      [1, true],
    ]);
    expect(h.events.filter((e) => e.type === 'job.completed')).toHaveLength(1);
    await other.stop(1_000);
  });

  it('ends VIDEO_PROCESSING, free, once the job has waited JOB_PROCESSING_WAIT_MS', async () => {
    const h = await jobsGateway({ env: { JOB_PROCESSING_WAIT_MS: '600000' } });
    const calls = streamInProcessing(h, () => true);
    const id = (await createJob(h, { source: { type: 'urls', urls: [stream, vod].map(watch) } })).json()
      .job_id;
    await runOnce(h);
    h.clock.advance(300_001);
    await runOnce(h);
    expect(calls.stream).toBe(2);
    // The next Retry-After (300 s) is cut to the job's limit.
    const started = (await h.store.byId(id))!.started_at!;
    expect((await h.store.byId(id))?.lease_until).toBe(started + 600_000);
    h.clock.advance(300_001);
    await runOnce(h);
    expect(calls.stream).toBe(3);
    expect(await getJob(h, id)).toMatchObject({
      status: 'completed',
      progress: { total: 2, succeeded: 1, failed: 1, pending: 0 },
      credits_charged: 1,
    });
    expect((await allResults(h, id, 10))[0]).toMatchObject({
      success: false,
      error_code: 'VIDEO_PROCESSING',
    });
    expect(h.ledger.balances.get('acc_pro')).toBe(99);
  });

  it('waits no longer than JOB_PROCESSING_RETRY_MAX_SECONDS between asks', async () => {
    const h = await jobsGateway({ env: { JOB_PROCESSING_RETRY_MAX_SECONDS: '5' } });
    streamInProcessing(h, () => true);
    const id = (await createJob(h, { source: { type: 'urls', urls: [watch(stream)] } })).json().job_id;
    await runOnce(h);
    expect((await h.store.byId(id))?.lease_until).toBe(h.clock.now() + 5_000);
  });

  it('fails INSUFFICIENT_CREDITS when the credits ran out before a parked item is asked again', async () => {
    const h = await jobsGateway({ balances: { acc_pro: 1 } });
    const calls = streamInProcessing(h, () => true);
    const id = (await createJob(h, { source: { type: 'urls', urls: [stream, vod].map(watch) } })).json()
      .job_id;
    await runOnce(h);
    h.clock.advance(300_001);
    await runOnce(h);
    expect(calls.stream).toBe(1);
    expect(await getJob(h, id)).toMatchObject({
      status: 'failed',
      error: { code: 'INSUFFICIENT_CREDITS' },
      progress: { total: 2, succeeded: 1, failed: 0, pending: 1 },
      credits_charged: 1,
    });
  });

  it('a job canceled while its items are parked ends canceled without asking again', async () => {
    const h = await jobsGateway();
    const calls = streamInProcessing(h, () => true);
    const id = (await createJob(h, { source: { type: 'urls', urls: [watch(stream)] } })).json().job_id;
    await runOnce(h);
    const canceled = await h.app.inject({
      method: 'DELETE',
      url: `/api/v1/jobs/${id}`,
      headers: auth(KEYS.pro),
    });
    expect(canceled.statusCode, canceled.body).toBe(200);
    h.clock.advance(300_001);
    await runOnce(h);
    expect(calls.stream).toBe(1);
    expect((await getJob(h, id)).status).toBe('canceled');
  });
});

/**
 * The job runner's item pool through the real routes and runner (jobs-support.ts): items flow past
 * a slow one without waiting for it, at most JOB_WINDOW_SIZE are in flight, a runner that dies with
 * items finished out of order is resumed without running or charging them again, the extraction
 * queue down uses up no tries (until JOB_STALL_LIMIT_MS), and credits held by items in flight come
 * back to the job when they fail.
 */
import { describe, expect, it } from 'vitest';
import { Errors } from '@subx/errors';
import { createDirectFanOut } from '@subx/fanout';
import type { FanOut } from '@subx/fanout';
import { transcript } from './support.ts';
import { allResults, createJob, getJob, jobsGateway, watch } from './jobs-support.ts';

const videos = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(10, '0')}`);

async function until(condition: () => boolean | Promise<boolean>, what: string) {
  for (let i = 0; i < 1_000; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`waited 5 s for ${what}`);
}

describe('the job item pool', () => {
  it('keeps items flowing past a slow one, never more than JOB_WINDOW_SIZE in flight', async () => {
    const h = await jobsGateway({ env: { JOB_WINDOW_SIZE: '3' } });
    const ids = videos('s', 12);
    const slow = ids[0]!;
    const finished: string[] = [];
    let inFlight = 0;
    let most = 0;
    let releaseSlow: () => void = () => {};
    const slowGate = new Promise<void>((resolve) => (releaseSlow = resolve));
    h.backends.handlers.getTranscript = async (req) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      try {
        if (req.videoId === slow) await slowGate;
        else await new Promise((resolve) => setTimeout(resolve, 2));
        finished.push(req.videoId);
        return transcript(req.videoId);
      } finally {
        inFlight -= 1;
      }
    };
    const id = (await createJob(h, { source: { type: 'urls', urls: ids.map(watch) } })).json().job_id;
    await h.runner.pollOnce();
    // Every other item gets its result while the first is still at the extractor.
    await until(async () => (await h.store.resultsBetween(id, 0, ids.length)).length === 11, 'the others');
    expect([...finished].sort()).toEqual(ids.slice(1).sort());
    expect((await h.store.result(id, 0)) === null).toBe(true);
    // The counts move with the finished prefix: the slow first item holds them, not the work.
    expect((await h.store.byId(id))?.next_index).toBe(0);
    releaseSlow();
    await h.drain();
    expect(await getJob(h, id)).toMatchObject({
      status: 'completed',
      progress: { total: 12, succeeded: 12, failed: 0, pending: 0 },
      credits_charged: 12,
    });
    expect(finished.at(-1)).toBe(slow);
    expect(most).toBe(3);
    expect(h.ledger.events.reduce((sum, e) => sum + e.credits, 0)).toBe(12);
    expect((await allResults(h, id, 100)).map((r) => r.index)).toEqual(ids.map((_, i) => i));
  });

  it('resumes a job whose runner died mid-pool: finished items are neither run nor charged again', async () => {
    const h = await jobsGateway({ env: { JOB_WINDOW_SIZE: '3', JOB_LEASE_MS: '5000' } });
    const ids = videos('m', 8);
    const direct = createDirectFanOut({ extractor: h.backends.extractor, concurrency: 4 });
    const hang = new Promise<never>(() => {});
    let calls = 0;
    // Runner A: the first item never comes back; items 1–4 finish (out of order, past it); then
    // it freezes with two more in flight.
    const dying: FanOut = {
      async run(request) {
        calls += 1;
        if (request.jobs[0]!.videoId === ids[0] || calls > 5) return hang;
        return direct.run(request);
      },
    };
    const jobId = (await createJob(h, { source: { type: 'urls', urls: ids.map(watch) } })).json().job_id;
    const a = h.newRunner('runner-dies', dying);
    await a.pollOnce();
    const charged = () => h.ledger.events.reduce((sum, e) => sum + e.credits, 0);
    // Items 3 and 4 are charged (their refill closed); 1 and 2 shared the first item's refill,
    // whose commit never comes: recorded, and not charged yet.
    await until(() => calls >= 7 && charged() === 2, 'runner A to freeze');
    expect((await h.store.resultsBetween(jobId, 0, 8)).map((r) => r.index)).toEqual([1, 2, 3, 4]);
    // Nothing saved past the first item, which has no result.
    expect((await h.store.byId(jobId))?.next_index).toBe(0);

    // Its lease runs out; another gateway takes the job over.
    h.clock.advance(6_000);
    await h.drain();
    expect(await getJob(h, jobId)).toMatchObject({
      status: 'completed',
      progress: { total: 8, succeeded: 8, failed: 0, pending: 0 },
    });
    // Each video asked once; the resuming runner charged what it ran (0, 5, 6, 7) and, from A's
    // reservation left noted on the job, what A recorded and never committed (1, 2): 8 in all.
    const asked = h.backends.calls
      .filter((c) => c.method === 'getTranscript')
      .map((c) => (c.request as { videoId: string }).videoId);
    expect(asked.sort()).toEqual([...ids].sort());
    expect(charged()).toBe(8);
    expect(h.ledger.reservations.filter((r) => r.state === 'reserved')).toEqual([]);
    expect((await allResults(h, jobId, 100)).map((r) => r.index)).toEqual(ids.map((_, i) => i));
    void a.stop(10);
  });

  it('the extraction queue down uses up no tries; an item answered 503 past JOB_STALL_LIMIT_MS fails', async () => {
    const h = await jobsGateway({
      env: { JOB_WINDOW_SIZE: '2', JOB_ITEM_ATTEMPTS: '1', JOB_STALL_LIMIT_MS: '60000' },
    });
    const ids = videos('q', 4);
    const direct = createDirectFanOut({ extractor: h.backends.extractor, concurrency: 4 });
    const down = () => Errors.serviceUnavailable('extraction queue');
    let unavailable = 0;
    // Down for the first six asks, each a few seconds apart; then up.
    const flaky: FanOut = {
      async run(request) {
        if (unavailable < 6) {
          unavailable += 1;
          h.clock.advance(5_000);
          return request.jobs.map(() => ({ ok: false as const, error: down() }));
        }
        return direct.run(request);
      },
    };
    const first = (await createJob(h, { source: { type: 'urls', urls: ids.map(watch) } })).json().job_id;
    const runner = h.newRunner('runner-stall', flaky);
    await runner.pollOnce();
    await runner.idle();
    expect(await getJob(h, first)).toMatchObject({
      status: 'completed',
      progress: { succeeded: 4, failed: 0 },
      credits_charged: 4,
    });

    // Down for good: once an item has been answered 503 for over a minute, it ends with it.
    const gone: FanOut = {
      async run(request) {
        h.clock.advance(20_000);
        return request.jobs.map(() => ({ ok: false as const, error: down() }));
      },
    };
    const second = (await createJob(h, { source: { type: 'urls', urls: [watch(ids[0]!)] } })).json().job_id;
    const stalled = h.newRunner('runner-stalled', gone);
    await stalled.pollOnce();
    await stalled.idle();
    expect(await getJob(h, second)).toMatchObject({
      status: 'completed',
      progress: { succeeded: 0, failed: 1 },
      credits_charged: 0,
    });
    expect((await allResults(h, second, 10))[0]).toMatchObject({ error_code: 'SERVICE_UNAVAILABLE' });
    await runner.stop(1_000);
    await stalled.stop(1_000);
  });

  it('waits for the credits items in flight hold: failures give theirs back, and the job goes on', async () => {
    const h = await jobsGateway({ env: { JOB_WINDOW_SIZE: '3' }, balances: { acc_pro: 3 } });
    const ids = videos('c', 6);
    const missing = ids[1]!;
    h.backends.handlers.getTranscript = async (req) => {
      if (req.videoId === missing) throw Errors.videoNotFound(req.videoId);
      return transcript(req.videoId);
    };
    const id = (await createJob(h, { source: { type: 'urls', urls: ids.map(watch) } })).json().job_id;
    await h.drain();
    // Three reserved at first; the failed item's credit came back and paid for a fourth item.
    expect(await getJob(h, id)).toMatchObject({
      status: 'failed',
      error: { code: 'INSUFFICIENT_CREDITS' },
      progress: { total: 6, succeeded: 3, failed: 1, pending: 2 },
      credits_charged: 3,
    });
    expect(h.ledger.balances.get('acc_pro')).toBe(0);
    const asked = h.backends.calls.filter((c) => c.method === 'getTranscript');
    expect(asked).toHaveLength(4);
  });
});

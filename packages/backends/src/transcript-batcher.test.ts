/**
 * The transcript batcher against real grpc-js servers on loopback (test/backends/support.ts): the extractor
 * stand-in, and one that only knows GetTranscript (an extractor from before StreamTranscripts).
 * A batch travels as a message on a long-lived StreamTranscripts lane (transcript-lanes.test.ts:
 * what only lanes do).
 */
import * as grpc from '@grpc/grpc-js';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { extractorV1 } from '@subx/contracts';
import type { AppError } from '@subx/errors';
import { defineService, scrape, type CallContext, type ServiceRegistration } from '@subx/service-kit';
import {
  EX,
  errorOf,
  grouping,
  handle,
  harness,
  registration,
  req,
  seen,
  shape,
  startHarness,
  stopHarnesses,
  transcript,
  type Harness,
} from '../test/support.ts';

afterEach(stopHarnesses);

describe('transcript batcher', () => {
  let h: Harness;
  beforeAll(async () => {
    // warm-up: a channel that is READY makes the timings below about the calls, not the connect
    h = await harness();
    await h.getTranscript(req('warm_______'));
  });
  afterAll(async () => {
    h.close();
    await h.server.shutdown(500);
  });

  it('sends a lone request as a plain unary GetTranscript', async () => {
    h.paths.length = 0;
    await expect(h.getTranscript(req('aaaaaaaaaaa'), { requestId: 'r-1' })).resolves.toMatchObject({
      videoId: 'aaaaaaaaaaa',
    });
    expect(h.paths).toEqual([EX.getTranscript.path]);
    expect(seen.batches).toEqual([]);
  });

  it('sends requests made together as one batch with each request id', async () => {
    // A harness of its own: the first batch of a batcher, whatever the other tests ran before.
    const fresh = await startHarness();
    const ids = ['aaaaaaaaaa1', 'aaaaaaaaaa2', 'aaaaaaaaaa3'];
    const answers = await Promise.all(
      ids.map((id, i) => fresh.getTranscript(req(id), { requestId: `req-${i}` })),
    );
    expect(answers.map((a) => (a as extractorV1.GetTranscriptResponse).videoId)).toEqual(ids);
    // the first batch: the first lane starts here
    expect(fresh.paths).toEqual([EX.streamTranscripts.path]);
    expect(seen.batches).toEqual([
      {
        items: ids,
        requestIds: ['req-0', 'req-1', 'req-2'],
        // a lane carries many batches: no request id of its own
        metadataId: undefined,
      },
    ]);
  });

  it('reads the answers an extractor finished together from one message, each item settled once', async () => {
    const ids = Array.from({ length: 10 }, (_, i) => `grouped___${i}`);
    const failing = 'notfound___';
    const settled = await Promise.allSettled([...ids, failing].map((id) => h.getTranscript(req(id))));
    expect(
      settled.slice(0, 10).map((r) => r.status === 'fulfilled' && (r.value as { videoId: string }).videoId),
    ).toEqual(ids);
    expect(shape((settled[10] as PromiseRejectedResult).reason)).toEqual(
      shape(await errorOf(h.unary(req(failing)))),
    );
    // 11 answers in one message (or very few)
    expect(seen.messages.reduce((a, b) => a + b, 0)).toBe(11);
    expect(seen.messages.length).toBeLessThan(4);
  });

  it("splits a group at the extractor's bound, and reads an extractor that answers each item alone", async () => {
    const ids = (tag: string) => Array.from({ length: 10 }, (_, i) => `${tag}${i}`.padEnd(11, '_'));
    grouping.maxAnswers = 3;
    // A harness of its own: the stand-in's bound holds for the lanes opened while it is set, and
    // the shared harness's lane must keep the default for the other tests, whatever their order.
    const bounding = await startHarness();
    const bounded = ids('bounded');
    expect(
      (await Promise.all(bounded.map((id) => bounding.getTranscript(req(id))))).map(
        (t) => (t as { videoId: string }).videoId,
      ),
    ).toEqual(bounded);
    expect(seen.messages).toEqual([3, 3, 3, 1]);
    seen.messages.length = 0;
    grouping.off = true;
    const alone = ids('alone');
    expect(
      (await Promise.all(alone.map((id) => bounding.getTranscript(req(id))))).map(
        (t) => (t as { videoId: string }).videoId,
      ),
    ).toEqual(alone);
    expect(seen.messages).toEqual(Array(10).fill(1));
  });

  it('rejects a failed item with the very AppError its unary call produces', async () => {
    const failing = ['notfound___', 'nosubs_____', 'blocked____', 'languages__', 'boom_______'];
    for (const id of failing) {
      const unary = await errorOf(h.unary(req(id)));
      const [batched] = await Promise.allSettled([
        h.getTranscript(req(id)),
        h.getTranscript(req('okokokokok1')),
      ]);
      expect(batched.status).toBe('rejected');
      expect(shape((batched as PromiseRejectedResult).reason)).toEqual(shape(unary));
    }
    expect(seen.batches).toHaveLength(failing.length);
    const blocked = shape(
      await errorOf(Promise.all([h.getTranscript(req('blocked____')), h.getTranscript(req('x'))])),
    );
    expect(blocked).toMatchObject({ code: 'UPSTREAM_BLOCKED', reason: 'http_429', retryAfterSeconds: 42 });
    expect(shape(await errorOf(h.getTranscript(req('boom_______'))))).toMatchObject({
      code: 'INTERNAL_ERROR',
    });
  });

  it('counts each item in the server metrics as a GetTranscript call, and never calls GetTranscripts', async () => {
    const count = async (method: string, code: string, side = 'server') => {
      const line = (await scrape())
        .split('\n')
        .find(
          (l) =>
            l.startsWith(`subx_grpc_${side}_handled_total{`) &&
            l.includes(`grpc_method="${method}"`) &&
            l.includes(`grpc_code="${code}"`),
        );
      return line ? Number(line.split(' ').pop()) : 0;
    };
    const before = [
      await count('GetTranscript', 'OK'),
      await count('GetTranscript', 'NOT_FOUND'),
      await count('GetTranscripts', 'OK'),
      await count('GetTranscripts', 'OK', 'client'),
    ];
    await Promise.allSettled([
      h.getTranscript(req('okokokokok2')),
      h.getTranscript(req('okokokokok3')),
      h.getTranscript(req('notfound___')),
    ]);
    await expect
      .poll(async () => [
        await count('GetTranscript', 'OK'),
        await count('GetTranscript', 'NOT_FOUND'),
        await count('GetTranscripts', 'OK'),
        await count('GetTranscripts', 'OK', 'client'),
      ])
      // a lane is counted when it ends (transcript-lanes.test.ts), not per batch
      .toEqual([before[0]! + 2, before[1]! + 1, ...before.slice(2)]);
  });

  it('answers in completion order: a slow item does not hold back a fast one', async () => {
    const t0 = performance.now();
    const slow = h.getTranscript(req('slow0000000')).then(() => performance.now() - t0);
    const fast = h.getTranscript(req('fast0000000')).then(() => performance.now() - t0);
    const [slowMs, fastMs] = await Promise.all([slow, fast]);
    expect(seen.batches).toHaveLength(1);
    expect(slowMs).toBeGreaterThanOrEqual(290);
    expect(fastMs).toBeLessThan(slowMs - 150);
  });

  it('rejects an item whose own deadline passes as a unary DEADLINE_EXCEEDED, the others go on', async () => {
    const unary = await errorOf(h.unary(req('hang_unary_'), { deadlineMs: 100 }));
    const t0 = performance.now();
    const [late, ok] = await Promise.allSettled([
      h.getTranscript(req('hang0000000'), { deadlineMs: 100 }),
      h.getTranscript(req('slow0000001')),
    ]);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(290);
    expect(late.status).toBe('rejected');
    expect(shape((late as PromiseRejectedResult).reason)).toEqual(shape(unary));
    expect(shape(unary)).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: 'The extractor service did not answer in time.',
    });
    expect(ok.status).toBe('fulfilled');
  });

  it('rejects an aborted item at once; when every item is settled the call is cancelled', async () => {
    const a = new AbortController();
    const b = new AbortController();
    const t0 = performance.now();
    const first = errorOf(h.getTranscript(req('hangabort01'), { signal: a.signal }));
    const second = errorOf(h.getTranscript(req('hangabort02'), { signal: b.signal }));
    await sleep(50);
    a.abort(new Error('client went away'));
    expect(shape(await first)).toMatchObject({ code: 'INTERNAL_ERROR' });
    // the lane cancels the item itself, while it still carries the second one
    await expect.poll(() => seen.cancelled).toContain('hangabort01');
    expect(seen.cancelled).not.toContain('hangabort02');
    b.abort(new Error('client went away'));
    expect(shape(await second)).toMatchObject({ code: 'INTERNAL_ERROR' });
    expect(performance.now() - t0).toBeLessThan(1_000);
    await expect
      .poll(() => seen.cancelled.filter((id) => id.startsWith('hangabort')).sort())
      .toEqual(['hangabort01', 'hangabort02']);
  });

  it('rejects an item aborted before it was sent without sending it', async () => {
    h.paths.length = 0;
    const a = new AbortController();
    const gone = errorOf(h.getTranscript(req('aaaaaaaaaa4'), { signal: a.signal }));
    const kept = h.getTranscript(req('aaaaaaaaaa5'));
    a.abort();
    expect(shape(await gone)).toMatchObject({ code: 'INTERNAL_ERROR' });
    await kept;
    expect(h.paths).toEqual([EX.getTranscript.path]);
  });
});

describe('transcript batcher, one server per test', () => {
  const start = (services?: ServiceRegistration[], extra: Parameters<typeof harness>[1] = {}) =>
    startHarness(services, extra);

  it('a call that fails (the server stopped mid-batch) rejects every open item as unary would', async () => {
    const h = await start();
    await h.getTranscript(req('warm_______'));
    const unary = errorOf(h.unary(req('hang_unary_')));
    const batched = [
      h.getTranscript(req('fast0000001')),
      errorOf(h.getTranscript(req('hang0000003'))),
      errorOf(h.getTranscript(req('hang0000004'))),
    ];
    await expect(batched[0]).resolves.toMatchObject({ videoId: 'fast0000001' });
    h.server.server.forceShutdown();
    const unaryError = shape(await unary);
    // grpc-js reports the dropped connection as INTERNAL or UNAVAILABLE, depending on timing
    expect(['INTERNAL_ERROR', 'SERVICE_UNAVAILABLE']).toContain(unaryError.code);
    expect(shape(await batched[1])).toEqual(unaryError);
    expect(shape(await batched[2])).toEqual(unaryError);
  });

  it('a call that cannot start (no server) rejects every item as unary would', async () => {
    // not stopped after the test: its server is stopped here
    const h = await harness();
    const port = h.server.port;
    await h.server.shutdown(500);
    expect(port).toBeGreaterThan(0);
    const unary = shape(await errorOf(h.unary(req('aaaaaaaaaaa'))));
    expect(unary.code).toBe('SERVICE_UNAVAILABLE');
    const batched = await Promise.allSettled([
      h.getTranscript(req('aaaaaaaaaaa')),
      h.getTranscript(req('bbbbbbbbbbb')),
    ]);
    for (const b of batched) expect(shape((b as PromiseRejectedResult).reason)).toEqual(unary);
    expect(h.paths.filter((p) => p === EX.streamTranscripts.path)).toHaveLength(1);
    h.client.close();
  });

  it('rejects an item the call ended without answering with INTERNAL_ERROR', async () => {
    const base = registration();
    const forgetful: ServiceRegistration = {
      definition: base.definition,
      implementation: {
        ...base.implementation,
        // the first item of the first message only, then the call ends OK
        streamTranscripts: async (
          requests: AsyncIterable<extractorV1.StreamTranscriptsRequest>,
          _ctx: CallContext,
          send: (r: extractorV1.StreamTranscriptsResponse) => void,
        ) => {
          for await (const r of requests) {
            const videoId = r.items[0]?.request?.videoId ?? '';
            const value = transcript(videoId);
            send({ index: r.firstIndex, result: { $case: 'transcript', value }, more: [] });
            return;
          }
        },
      },
    };
    const h = await start([forgetful]);
    const [first, second] = await Promise.allSettled([
      h.getTranscript(req('answered___')),
      h.getTranscript(req('forgotten__')),
    ]);
    expect(first).toMatchObject({ status: 'fulfilled', value: { videoId: 'answered___' } });
    expect(second.status).toBe('rejected');
    const err = (second as PromiseRejectedResult).reason as AppError;
    expect(shape(err)).toMatchObject({ code: 'INTERNAL_ERROR' });
    expect(String((err.cause as Error).message)).toBe('StreamTranscripts ended without answering item 1');
  });

  it('gathers the requests of consecutive turns into one call while they keep coming', async () => {
    // The time bound out of the way: a loaded test machine may take more than 2 ms for a few turns.
    const h = await start(undefined, { gather: { maxMs: 60_000 } });
    h.paths.length = 0;
    const ids = ['turn0000001', 'turn0000002', 'turn0000003', 'turn0000004'];
    const answers: Promise<unknown>[] = [];
    for (const id of ids) {
      answers.push(h.getTranscript(req(id)));
      await new Promise((resolve) => setImmediate(resolve)); // the next request one turn later
    }
    await Promise.all(answers);
    expect(seen.batches.map((b) => b.items)).toEqual([ids]);
    expect(h.paths).toEqual([EX.streamTranscripts.path]);

    // A turn that brings nothing ends the gathering: a request two turns later goes on its own.
    seen.batches.length = 0;
    h.paths.length = 0;
    const first = h.getTranscript(req('alone000001'));
    for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
    await Promise.all([first, h.getTranscript(req('alone000002'))]);
    expect(h.paths).toEqual([EX.getTranscript.path, EX.getTranscript.path]);
  });

  it('stops gathering after its turns, its time, or a full call, whichever comes first', async () => {
    const turnsPerRequest = async (extra: Parameters<typeof harness>[1], count: number) => {
      const h = await start(undefined, extra);
      seen.batches.length = 0;
      const answers: Promise<unknown>[] = [];
      for (let i = 0; i < count; i++) {
        answers.push(h.getTranscript(req(`bound${String(i).padStart(6, '0')}`)));
        await new Promise((resolve) => setImmediate(resolve));
      }
      await Promise.all(answers);
      return seen.batches.map((b) => b.items.length);
    };
    // Two looks at most after the first request's turn, each finding one more: three a call.
    expect(await turnsPerRequest({ gather: { maxTurns: 2, maxMs: 60_000 } }, 6)).toEqual([3, 3]);
    // A full call goes at once.
    expect(await turnsPerRequest({ maxBatch: 2, gather: { maxMs: 60_000 } }, 6)).toEqual([2, 2, 2]);
    // No time at all: every look finds the time up, so each request goes as soon as it is seen.
    expect(await turnsPerRequest({ gather: { maxMs: 0 } }, 4)).toEqual([]);
    expect(seen.unary).toHaveLength(4);
  });

  it('splits a gathering bigger than the cap into even calls', async () => {
    const h = await start(undefined, { maxBatch: 4 });
    const ids = Array.from({ length: 9 }, (_, i) => `split${String(i).padStart(6, '0')}`);
    await Promise.all(ids.map((id) => h.getTranscript(req(id))));
    expect(seen.batches.map((b) => b.items)).toEqual([ids.slice(0, 3), ids.slice(3, 6), ids.slice(6)]);
    expect(seen.unary).toEqual([]);
  });

  it('falls back to unary calls, and pauses batching, when the extractor has no StreamTranscripts', async () => {
    const old = defineService(
      { getTranscript: EX.getTranscript },
      {
        getTranscript: (r, ctx) => {
          seen.unary.push(r.videoId);
          return handle(r, ctx);
        },
      },
    );
    const h = await start([old], { pauseMs: 300 });
    const ids = ['old00000001', 'old00000002', 'notfound___'];
    const settled = await Promise.allSettled(ids.map((id) => h.getTranscript(req(id))));
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    expect(shape((settled[2] as PromiseRejectedResult).reason)).toMatchObject({ code: 'VIDEO_NOT_FOUND' });
    expect(seen.unary.sort()).toEqual([...ids].sort());
    expect(h.paths.filter((p) => p === EX.streamTranscripts.path)).toHaveLength(1);

    // paused: straight to unary, no StreamTranscripts attempt
    await Promise.all([h.getTranscript(req('old00000003')), h.getTranscript(req('old00000004'))]);
    expect(h.paths.filter((p) => p === EX.streamTranscripts.path)).toHaveLength(1);

    // after the pause it tries again (and falls back again: still the old extractor)
    await sleep(350);
    await Promise.all([h.getTranscript(req('old00000005')), h.getTranscript(req('old00000006'))]);
    expect(h.paths.filter((p) => p === EX.streamTranscripts.path)).toHaveLength(2);
    // never the deprecated GetTranscripts
    expect(h.paths.filter((p) => p === EX.getTranscripts.path)).toEqual([]);
    expect(h.paths.filter((p) => p === EX.getTranscript.path)).toHaveLength(7);
    expect(seen.unary).toHaveLength(7);
  });

  it("logs a failed item with its own request id and the unary method's name", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    const h = await start(undefined, { serverLogger: pino({ level: 'info' }, sink) });
    await Promise.allSettled([
      h.getTranscript(req('okokokokok9'), { requestId: 'req-first' }),
      h.getTranscript(req('notfound___'), { requestId: 'req-item' }),
    ]);
    await expect.poll(() => lines.some((l) => l.includes('VIDEO_NOT_FOUND'))).toBe(true);
    const line = lines.find((l) => l.includes('VIDEO_NOT_FOUND')) ?? '';
    expect(line.match(/"request_id":/g)).toHaveLength(1);
    expect(JSON.parse(line)).toMatchObject({
      request_id: 'req-item',
      rpc: EX.getTranscript.path,
      // a lane's own request id (it carries many batches)
      batch_request_id: expect.any(String),
      code: 'VIDEO_NOT_FOUND',
    });
  });

  it('refuses a batch over the server cap with INVALID_ARGUMENT', async () => {
    const h = await start();
    const items = Array.from({ length: 65 }, () => ({ request: req('aaaaaaaaaaa'), requestId: '' }));
    const call = h.client.streamTranscripts();
    call.write({
      items: items.map((i) => ({ ...i, timeoutMs: 0 })),
      groupAnswers: false,
      firstIndex: 0,
      cancel: [],
    });
    const status = new Promise<grpc.StatusObject>((resolve) => {
      call.on('error', () => undefined);
      call.on('status', resolve);
      call.resume();
    });
    expect((await status).code).toBe(grpc.status.INVALID_ARGUMENT);
    expect((await status).metadata.get('app-error-code')).toEqual(['INVALID_REQUEST']);
  });
});

/**
 * What only StreamTranscripts lanes do: their spread, their age, the fallback to unary calls, and the extractor side of a lane (numbers, timeouts, cancellation, the in-flight cap),
 * against the stand-in of test/backends/support.ts.
 */
import * as grpc from '@grpc/grpc-js';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { extractorV1 } from '@subx/contracts';
import { fromItemFailure, scrape } from '@subx/service-kit';
import {
  EX,
  STREAM_MAX_IN_FLIGHT,
  registration,
  req,
  seen,
  shape,
  startHarness,
  stopHarnesses,
  type Harness,
} from '../test/support.ts';

afterEach(stopHarnesses);

describe('transcript batcher, StreamTranscripts lanes', () => {
  /** A raw StreamTranscripts call: what it answers, by number, and how it ends. */
  function rawLane(h: Harness) {
    const call = h.client.streamTranscripts();
    const answers = new Map<number, extractorV1.StreamTranscriptsResponse['result']>();
    const status = new Promise<grpc.StatusObject>((resolve) => {
      call.on('data', (m: extractorV1.StreamTranscriptsResponse) => {
        for (const a of [m, ...m.more]) answers.set(a.index, a.result);
      });
      call.on('error', () => undefined);
      call.on('status', resolve);
    });
    const send = (
      firstIndex: number,
      ids: string[],
      options: { timeoutMs?: number; cancel?: number[] } = {},
    ) =>
      call.write({
        items: ids.map((id) => ({ request: req(id), requestId: '', timeoutMs: options.timeoutMs ?? 0 })),
        groupAnswers: true,
        firstIndex,
        cancel: options.cancel ?? [],
      });
    return { call, answers, status, send };
  }
  const codeOf = (result: extractorV1.StreamTranscriptsResponse['result']) =>
    result?.$case === 'error' ? fromItemFailure(result.value, 'extractor').code : result?.$case;

  it('spreads batches over its lanes, opening each once', async () => {
    const h = await startHarness(undefined, { streamLanes: 2 });
    for (let round = 0; round < 3; round++) {
      await Promise.all(['lanes000001', 'lanes000002'].map((id) => h.getTranscript(req(id))));
    }
    expect(h.paths).toEqual([EX.streamTranscripts.path, EX.streamTranscripts.path]);
    expect(seen.batches).toHaveLength(3);
  });

  it('half-closes a lane after its age: it ends OK once answered, and the next batch opens a new one', async () => {
    const count = async (side: string) => {
      const line = (await scrape())
        .split('\n')
        .find(
          (l) =>
            l.startsWith(`subx_grpc_${side}_handled_total{`) &&
            l.includes('grpc_method="StreamTranscripts"') &&
            l.includes('grpc_code="OK"'),
        );
      return line ? Number(line.split(' ').pop()) : 0;
    };
    const before = [await count('client'), await count('server')];
    const h = await startHarness(undefined, { streamLanes: 1, streamMaxAgeMs: 100 });
    // a slow item still on the lane when it is half-closed is answered before it ends
    const slow = h.getTranscript(req('slow0000009'));
    await Promise.all([slow, h.getTranscript(req('aged0000001'))]);
    await expect
      .poll(async () => [await count('client'), await count('server')])
      .toEqual([before[0]! + 1, before[1]! + 1]);
    await Promise.all([h.getTranscript(req('aged0000002')), h.getTranscript(req('aged0000003'))]);
    expect(h.paths).toEqual([EX.streamTranscripts.path, EX.streamTranscripts.path]);
  });

  it('goes unary, pausing the lanes, with an extractor that has GetTranscripts but no StreamTranscripts', async () => {
    const base = registration();
    const { streamTranscripts: _s, ...definition } = base.definition as typeof EX;
    const { streamTranscripts: _i, ...implementation } = base.implementation;
    const h = await startHarness([{ definition, implementation }], { streamLanes: 4, pauseMs: 300 });
    const ids = ['nostream001', 'nostream002', 'notfound___'];
    const settled = await Promise.allSettled(ids.map((id) => h.getTranscript(req(id))));
    expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    expect(shape((settled[2] as PromiseRejectedResult).reason)).toMatchObject({ code: 'VIDEO_NOT_FOUND' });
    expect(seen.unary.sort()).toEqual([...ids].sort());
    await Promise.all([h.getTranscript(req('nostream003')), h.getTranscript(req('nostream004'))]);
    // the lanes paused: no new lane, and never the deprecated GetTranscripts
    expect(h.paths).toEqual([EX.streamTranscripts.path, ...Array(5).fill(EX.getTranscript.path)]);
    expect(seen.unary).toHaveLength(5);
    expect(seen.batches).toEqual([]);
  });

  it('the extractor side: numbers along the call, stops an item at its own timeout or when cancelled, caps what is in flight', async () => {
    const h = await startHarness();
    const lane = rawLane(h);
    lane.send(7, ['okokokoko11', 'hangtimeout']);
    lane.send(9, ['hangcancel1'], { timeoutMs: 60_000 });
    await expect.poll(() => lane.answers.has(7) && lane.answers.has(8)).toBe(true);
    expect(codeOf(lane.answers.get(7))).toBe('transcript');
    // hangtimeout had no timeout of its own: the server's default (300 ms here) stopped it
    expect(seen.cancelled).toContain('hangtimeout');
    lane.send(10, [], { cancel: [9] });
    await expect.poll(() => seen.cancelled).toContain('hangcancel1');
    await sleep(50);
    expect(lane.answers.has(9)).toBe(false); // a cancelled item is not answered
    // the cap: 80 in flight, the 81st answered SERVICE_UNAVAILABLE at once
    const capped = Array.from({ length: STREAM_MAX_IN_FLIGHT + 1 }, (_, i) => `hangcap${i}`.padEnd(11, '_'));
    // Timeouts far beyond the test: number 100 must still be in flight when it is sent again below,
    // however slow the machine (the call's end cancels them).
    lane.send(100, capped.slice(0, 64), { timeoutMs: 60_000 });
    lane.send(164, capped.slice(64), { timeoutMs: 60_000 });
    await expect.poll(() => lane.answers.has(100 + STREAM_MAX_IN_FLIGHT)).toBe(true);
    expect(codeOf(lane.answers.get(100 + STREAM_MAX_IN_FLIGHT))).toBe('SERVICE_UNAVAILABLE');
    expect(lane.answers.has(100)).toBe(false);
    // a number already in flight is a caller's bug: the call ends INVALID_ARGUMENT
    lane.send(100, ['okokokoko12']);
    expect((await lane.status).code).toBe(grpc.status.INVALID_ARGUMENT);
  });

  it('the extractor side: a half-closed call ends OK once every item is answered', async () => {
    const h = await startHarness();
    const lane = rawLane(h);
    lane.send(0, ['slow0000011', 'okokokoko13'], { timeoutMs: 5_000 });
    lane.call.end();
    expect((await lane.status).code).toBe(grpc.status.OK);
    expect([...lane.answers.keys()].sort()).toEqual([0, 1]);
  });
});

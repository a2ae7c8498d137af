import { describe, expect, it } from 'vitest';
import { ManualClock } from '@subx/ports';
import {
  completeJsonBody,
  createExtractCache,
  jsonHead,
  jsonHeadAround,
  jsonTail,
  kept,
  sentOnce,
} from './extract-cache.ts';
import type { ExtractCacheKey } from './extract-cache.ts';

const key = (videoId: string, overrides: Partial<ExtractCacheKey> = {}): ExtractCacheKey => ({
  videoId,
  language: 'en',
  include: [],
  translate: false,
  format: 'json',
  includeTimestamps: true,
  ...overrides,
});
const json = (payload: string) => ({
  contentType: 'application/json; charset=utf-8',
  payload: Buffer.from(payload),
});

describe('extract micro-cache', () => {
  it('is off when the byte cap or the TTL is 0', () => {
    const clock = new ManualClock(0);
    expect(createExtractCache({ ttlMs: 0, maxBytes: 1000, clock })).toBeUndefined();
    expect(createExtractCache({ ttlMs: 1000, maxBytes: 0, clock })).toBeUndefined();
  });

  it('serves an entry until its TTL, never after', () => {
    const clock = new ManualClock(1_000_000);
    const cache = createExtractCache({ ttlMs: 30_000, maxBytes: 1 << 20, clock })!;
    cache.set(key('aaaaaaaaaaa'), json('{"a":1'));
    clock.advance(29_999);
    expect(cache.get(key('aaaaaaaaaaa'))?.payload.toString()).toBe('{"a":1');
    clock.advance(2);
    expect(cache.get(key('aaaaaaaaaaa'))).toBeUndefined();
    expect(cache.stats().entries).toBe(0);
  });

  it('keeps every field that changes the bytes in the key', () => {
    const cache = createExtractCache({ ttlMs: 1000, maxBytes: 1 << 20, clock: new ManualClock(0) })!;
    cache.set(key('aaaaaaaaaaa'), json('base'));
    const variants: Partial<ExtractCacheKey>[] = [
      { language: 'fr' },
      { include: ['tags'] },
      { translate: true },
      { format: 'srt' },
      { includeTimestamps: false },
    ];
    for (const v of variants) expect(cache.get(key('aaaaaaaaaaa', v)), JSON.stringify(v)).toBeUndefined();
    expect(cache.get(key('bbbbbbbbbbb'))).toBeUndefined();
    expect(cache.get(key('aaaaaaaaaaa'))?.payload.toString()).toBe('base');
  });

  it('holds no more than its byte cap, dropping the least recently used first', () => {
    const maxBytes = 50_000;
    const cache = createExtractCache({ ttlMs: 60_000, maxBytes, clock: new ManualClock(0) })!;
    const payload = 'x'.repeat(10_000); // about 10 KB each as counted
    for (let i = 0; i < 4; i++) cache.set(key(`video${i}`.padEnd(11, '0')), json(payload));
    // Touch the first so the second becomes the least recently used.
    expect(cache.get(key('video0'.padEnd(11, '0')))).toBeDefined();
    for (let i = 4; i < 20; i++) {
      cache.set(key(`video${i}`.padEnd(11, '0')), json(payload));
      expect(cache.stats().bytes).toBeLessThanOrEqual(maxBytes);
    }
    expect(cache.stats().entries).toBe(4);
    expect(cache.get(key('video1'.padEnd(11, '0')))).toBeUndefined();
    expect(cache.get(key('video19'.padEnd(11, '0')))).toBeDefined();
  });

  it('does not store an entry larger than the cap', () => {
    const cache = createExtractCache({ ttlMs: 60_000, maxBytes: 1_000, clock: new ManualClock(0) })!;
    cache.set(key('aaaaaaaaaaa'), json('y'.repeat(1_000)));
    expect(cache.get(key('aaaaaaaaaaa'))).toBeUndefined();
    expect(cache.stats()).toEqual({ entries: 0, bytes: 0 });
  });

  it('head + per-request tail are the bytes JSON.stringify gives for the whole body', () => {
    const rest = {
      video_id: 'aaaaaaaaaaa',
      metadata: { title: 'Ünïcödé "quoted" \\ \u2028 😀', tags: ['a', 'b'] },
      subtitles: [{ text: 'line\nbreak\t<b>', start: 0.1, duration: 1e-7 }],
      cached: true,
      extracted_at: '2026-03-10T11:00:00.000Z',
    };
    const rateLimit = { limit: 100, remaining: 7, reset: 1773187200, reset_at: '2026-03-11T00:00:00.000Z' };
    const requestId = 'req_"odd"\\id';
    const rateLimitJson = JSON.stringify(rateLimit);
    expect(completeJsonBody(Buffer.from(jsonHead(rest)), rateLimitJson, requestId, 3).toString('utf8')).toBe(
      JSON.stringify({ ...rest, credits_used: 3, rate_limit: rateLimit, request_id: requestId }),
    );
  });

  it('completed bodies never share bytes: each stays intact while later ones are written', () => {
    // Bodies are cut from shared slabs; thousands of them cross several slabs, and a large one
    // gets a buffer of its own.
    const bodies: { body: Buffer; expected: string }[] = [];
    for (let i = 0; i < 3_000; i++) {
      const head =
        i % 1_000 === 999 ? `{"big":"${'b'.repeat(100_000)}"` : `{"n":${i},"pad":"${'p'.repeat(i % 97)}"`;
      const rateLimit = { remaining: i };
      bodies.push({
        body: completeJsonBody(Buffer.from(head), JSON.stringify(rateLimit), `req_${i}`, i % 3),
        expected: `${head},"credits_used":${i % 3},"rate_limit":{"remaining":${i}},"request_id":"req_${i}"}`,
      });
    }
    for (const { body, expected } of bodies) expect(body.toString('utf8')).toBe(expected);
  });

  it('jsonHeadAround splices already-rendered members and JSON in, the bytes jsonHead gives for the whole', () => {
    const before = { video_id: 'aaaaaaaaaaa', metadata: { title: 'Ünïcödé "q" \u2028 😀' } };
    const members = JSON.stringify(before).slice(1, -1);
    const subtitles = [{ text: 'line\nbreak "x" 🎵', start: 0.1, duration: 1e-7 }];
    for (const after of [{ cached: true, extracted_at: '2026-03-10T11:00:00.000Z' }, {}]) {
      const whole = jsonHead({ ...before, subtitles, ...after });
      const json = JSON.stringify(subtitles);
      // Each as a string or as UTF-8 bytes (copied in as they are), into either kind of buffer.
      for (const alloc of [kept, sentOnce]) {
        for (const head of [members, Buffer.from(members)]) {
          for (const segments of [json, Buffer.from(json)]) {
            expect(jsonHeadAround(head, 'subtitles', segments, after, alloc).toString('utf8')).toBe(whole);
          }
        }
      }
    }
  });

  it('jsonHeadAround with a tail writes the whole body completeJsonBody would make of its head', () => {
    const before = { video_id: 'aaaaaaaaaaa', metadata: { title: 'Ünïcödé "q" \u2028 😀' } };
    const members = JSON.stringify(before).slice(1, -1);
    const subtitles = JSON.stringify([{ text: 'line\nbreak "x" 🎵', start: 0.1, duration: 1e-7 }]);
    const rateLimit = { limit: 100, remaining: 7, reset: 1773187200, reset_at: '2026-03-11T00:00:00.000Z' };
    const requestId = 'req_"odd"\\id';
    for (const after of [{ cached: false, extracted_at: '2026-03-10T11:00:00.000Z' }, {}]) {
      const completed = completeJsonBody(
        jsonHeadAround(members, 'subtitles', subtitles, after, kept),
        JSON.stringify(rateLimit),
        requestId,
        2,
      ).toString('utf8');
      expect(JSON.parse(completed)).toEqual({
        ...before,
        subtitles: JSON.parse(subtitles),
        ...after,
        credits_used: 2,
        rate_limit: rateLimit,
        request_id: requestId,
      });
      const tail = jsonTail(JSON.stringify(rateLimit), requestId, 2);
      for (const head of [members, Buffer.from(members)]) {
        for (const json of [subtitles, Buffer.from(subtitles)]) {
          expect(jsonHeadAround(head, 'subtitles', json, after, sentOnce, tail).toString('utf8')).toBe(
            completed,
          );
        }
      }
    }
  });
});

import { createHash } from 'node:crypto';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { chunkTranscript, type ChunkingOptions } from './chunks.ts';
import type { Segment } from './types.ts';

/** A small seeded generator: the same transcripts on every run. */
function random(seed: number) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}
const WORDS = [
  'the',
  'platform',
  'changed',
  'again',
  'Zürich',
  '1919',
  'caption',
  'über',
  '字幕',
  'naïve',
  'ok,',
  'so',
];
function transcript(seed: number, n: number): Segment[] {
  const next = random(seed);
  let t = 0;
  return Array.from({ length: n }, () => {
    const words = Array.from(
      { length: 1 + Math.floor(next() * 30) },
      () => WORDS[Math.floor(next() * WORDS.length)],
    );
    const duration = 0.5 + next() * 5;
    const segment = { text: words.join(' '), start: t, duration };
    t += duration + next();
    return segment;
  });
}
const input = (segments: Segment[], chapters?: { title: string; start: number }[]) => ({
  videoId: 'dQw4w9WgXcQ',
  language: 'en',
  segments,
  chapters,
});
const opts = (maxTokens: number, overlapTokens = 0, split: ChunkingOptions['split'] = 'none') => ({
  maxTokens,
  overlapTokens,
  split,
});

describe('chunkTranscript', () => {
  it.each([16, 60, 512])(
    'keeps every chunk within %i o200k tokens and every segment in some chunk',
    (max) => {
      for (const seed of [1, 2, 3]) {
        const segments = transcript(seed, 80);
        const chunks = chunkTranscript(input(segments), opts(max, Math.floor(max / 4)));
        for (const chunk of chunks) {
          expect(chunk.token_count).toBe(countTokens(chunk.text, { disallowedSpecial: new Set() }));
          expect(chunk.token_count).toBeLessThanOrEqual(max);
        }
        const all = chunks.map((c) => c.text).join(' ');
        // Segments over the budget are cut at words: each word of each segment appears, in order.
        let from = 0;
        for (const word of segments.flatMap((s) => s.text.split(' '))) {
          const at = all.indexOf(word, from);
          expect(at, word).toBeGreaterThanOrEqual(0);
          from = at;
        }
        expect(chunks.map((c) => c.index)).toEqual(chunks.map((_, i) => i));
        for (let i = 1; i < chunks.length; i++)
          expect(chunks[i]!.start).toBeGreaterThanOrEqual(chunks[i - 1]!.start);
      }
    },
  );

  it('links, hashes and names each chunk; ids are stable and depend on the chunking', () => {
    const segments = transcript(7, 40);
    const a = chunkTranscript(input(segments), opts(60, 10));
    const b = chunkTranscript(input(segments), opts(60, 10));
    expect(a).toEqual(b);
    const c = chunkTranscript(input(segments), opts(61, 10));
    expect(new Set(c.map((x) => x.id)).has(a[0]!.id)).toBe(false);
    for (const chunk of a) {
      expect(chunk.url).toBe(`https://youtu.be/dQw4w9WgXcQ?t=${Math.floor(chunk.start)}`);
      expect(chunk.content_hash).toBe(`sha256:${createHash('sha256').update(chunk.text).digest('hex')}`);
      expect(chunk.id).toMatch(/^chk_[0-9a-f]{32}$/);
      expect(chunk.end).toBeGreaterThan(chunk.start);
    }
    expect(new Set(a.map((x) => x.id)).size).toBe(a.length);
  });

  it('repeats whole trailing segments within the overlap budget, and none without one', () => {
    const segments = Array.from({ length: 30 }, (_, i) => ({
      text: `sentence number ${i} here`,
      start: i * 2,
      duration: 2,
    }));
    const without = chunkTranscript(input(segments), opts(40, 0));
    const withOverlap = chunkTranscript(input(segments), opts(40, 12));
    const words = (chunks: { text: string }[]) => chunks.reduce((n, c) => n + c.text.split(' ').length, 0);
    expect(words(without)).toBe(30 * 4);
    expect(words(withOverlap)).toBeGreaterThan(30 * 4);
    for (let i = 1; i < withOverlap.length; i++) {
      const previous = withOverlap[i - 1]!.text;
      const firstSentence = /^sentence number \d+ here/.exec(withOverlap[i]!.text)![0];
      expect(previous).toContain(firstSentence);
    }
  });

  it('never spans two chapters when splitting by chapters, and names the chapter of each chunk', () => {
    const segments = Array.from({ length: 20 }, (_, i) => ({
      text: `line ${i}`,
      start: i * 10,
      duration: 10,
    }));
    const chapters = [
      { title: 'Intro', start: 0 },
      { title: 'Middle', start: 55 },
      { title: 'End', start: 150 },
    ];
    const split = chunkTranscript(input(segments, chapters), opts(8000, 0, 'chapters'));
    expect(split.map((c) => c.chapter)).toEqual(['Intro', 'Middle', 'End']);
    expect(split.map((c) => c.start)).toEqual([0, 60, 150]);
    const whole = chunkTranscript(input(segments, chapters), opts(8000, 0, 'none'));
    expect(whole).toHaveLength(1);
    expect(whole[0]!.chapter).toBe('Intro');
  });

  it('cuts a segment longer than the budget at words, with times shared out', () => {
    const long = { text: Array.from({ length: 200 }, (_, i) => `w${i}`).join(' '), start: 10, duration: 100 };
    const chunks = chunkTranscript(input([long]), opts(16));
    expect(chunks.length).toBeGreaterThan(5);
    expect(chunks[0]!.start).toBe(10);
    expect(chunks.at(-1)!.end).toBeCloseTo(110, 3);
    expect(chunks.map((c) => c.text).join(' ')).toBe(long.text);
  });

  it('counts special-token look-alikes as plain text and skips empty segments', () => {
    const chunks = chunkTranscript(
      input([
        { text: '  ', start: 0, duration: 1 },
        { text: 'say <|endoftext|> now', start: 1, duration: 1 },
      ]),
      opts(16),
    );
    expect(chunks.map((c) => c.text)).toEqual(['say <|endoftext|> now']);
  });
});

describe('chunkTranscript at word times', () => {
  it('a segment over the budget is cut between its timed words, each chunk spanning its words', () => {
    const words = Array.from({ length: 60 }, (_, i) => ({ text: `word${i}`, start: 10 + i, end: 10.5 + i }));
    const segment = { text: words.map((w) => w.text).join(' '), start: 10, duration: 100, words };
    const chunks = chunkTranscript(
      { videoId: 'aaaaaaaaaaa', language: 'en', segments: [segment] },
      { maxTokens: 16, overlapTokens: 0, split: 'none' },
    );
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.map((c) => c.text).join(' ')).toBe(segment.text);
    for (const c of chunks) {
      const inChunk = c.text.split(' ').map((t) => words.find((w) => w.text === t)!);
      // times are the words' own, not shares of the segment by characters
      expect(c.start).toBe(inChunk[0]!.start);
      expect(c.end).toBe(inChunk.at(-1)!.end);
      expect(c.token_count).toBeLessThanOrEqual(16);
    }
  });
});

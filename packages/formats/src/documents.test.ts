import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import type { WebVTTParser as WebVTTParserType } from 'webvtt-parser';
import {
  CONTENT_TYPES,
  parseSrtStrict,
  renderDocument,
  toMarkdown,
  toPlainText,
  toSrt,
  toTxt,
  toVtt,
} from './index.ts';
import type { Segment } from './index.ts';

// webvtt-parser is CommonJS that assigns its exports dynamically; require() sees them reliably.
const require = createRequire(import.meta.url);
const { WebVTTParser } = require('webvtt-parser') as { WebVTTParser: typeof WebVTTParserType };
const entities = require('webvtt-parser/html-entities.json') as Record<string, string>;

/** Strict: the spec-complete entity table, and any parser error fails the test. */
function parseVttStrict(doc: string) {
  const result = new WebVTTParser(entities).parse(doc, 'metadata');
  expect(result.errors, JSON.stringify(result.errors)).toEqual([]);
  return result.cues;
}

const segments: Segment[] = [
  { text: 'Hello there', start: 0, duration: 1.5 },
  { text: 'General Kenobi', start: 1.5, duration: 2.25 },
  { text: 'You are a bold one', start: 3661.2, duration: 2 },
];

const hostile: Segment[] = [
  { text: 'line one\n\nline two', start: 0, duration: 1 },
  { text: 'arrow --> inside and ---> again', start: 1, duration: 1 },
  // Segment text is already plain (the extractor decoded it once): `&lt;3` here is literally what was
  // said, and prose angle brackets are content; only real caption markup goes.
  {
    text: '<i>italic</i> & <3 \'q\' a < b > c x<y and y>z <font color="#E5E5E5">f</font><c.colorE5E5E5>c</c> &lt;3 a <b and c> d',
    start: 2,
    duration: 1,
  },
  { text: '   \n  ', start: 3, duration: 1 },
  { text: '1\n00:00:01,000 --> 00:00:02,000', start: 4, duration: 1 },
  { text: 'zero duration', start: 5, duration: 0 },
  { text: 'negative start', start: -1, duration: 0.5 },
  { text: 'NOTE not a note\r\nWEBVTT', start: 6, duration: 1 },
  { text: 'out of order', start: 0.5, duration: 0.2 },
  { text: 'ctrl\u0007char\u2028sep', start: 7, duration: 1 },
];

describe('srt', () => {
  it('numbers cues, uses HH:MM:SS,mmm and end = start + duration', () => {
    expect(toSrt(segments)).toBe(
      '1\n00:00:00,000 --> 00:00:01,500\nHello there\n\n' +
        '2\n00:00:01,500 --> 00:00:03,750\nGeneral Kenobi\n\n' +
        '3\n01:01:01,200 --> 01:01:03,200\nYou are a bold one\n',
    );
    const cues = parseSrtStrict(toSrt(segments));
    expect(cues.map((c) => [c.startMs, c.endMs, c.text])).toEqual([
      [0, 1500, 'Hello there'],
      [1500, 3750, 'General Kenobi'],
      [3_661_200, 3_663_200, 'You are a bold one'],
    ]);
  });

  it('stays strictly valid for hostile text, zero durations and unordered segments', () => {
    const cues = parseSrtStrict(toSrt(hostile));
    expect(cues.map((c) => c.text)).toEqual([
      'line one\nline two',
      // clamped to 0 and after the earlier segment at 0 (the sort is stable)
      'negative start',
      'out of order',
      'arrow -> inside and -> again',
      "italic & <3 'q' a < b > c x<y and y>z fc &lt;3 a <b and c> d",
      '1\n00:00:01,000 -> 00:00:02,000',
      'zero duration',
      'NOTE not a note\nWEBVTT',
      'ctrlcharsep',
    ]);
    const zero = cues.find((c) => c.text === 'zero duration');
    expect(zero).toMatchObject({ startMs: 5000, endMs: 5001 });
  });

  it('renders an empty transcript as an empty document', () => {
    expect(toSrt([])).toBe('');
    expect(parseSrtStrict('')).toEqual([]);
  });

  it('the strict reader rejects broken documents', () => {
    expect(() => parseSrtStrict('1\n00:00:00,000 --> 00:00:01,000\n\n')).toThrow();
    expect(() => parseSrtStrict('2\n00:00:00,000 --> 00:00:01,000\nx\n')).toThrow(/index/);
    expect(() => parseSrtStrict('1\n00:00:01,000 --> 00:00:01,000\nx\n')).toThrow(/end/);
    expect(() => parseSrtStrict('1\n00:00:00.000 --> 00:00:01,000\nx\n')).toThrow(/timing/);
    expect(() => parseSrtStrict('1\n00:00:00,000 --> 00:00:01,000\na --> b\n')).toThrow(/-->/);
  });
});

describe('vtt', () => {
  it('has the WEBVTT header and HH:MM:SS.mmm cue timings', () => {
    const doc = toVtt(segments);
    expect(doc).toBe(
      'WEBVTT\n\n' +
        '00:00:00.000 --> 00:00:01.500\nHello there\n\n' +
        '00:00:01.500 --> 00:00:03.750\nGeneral Kenobi\n\n' +
        '01:01:01.200 --> 01:01:03.200\nYou are a bold one\n',
    );
    const cues = parseVttStrict(doc);
    expect(cues.map((c) => [c.startTime, c.endTime, c.text])).toEqual([
      [0, 1.5, 'Hello there'],
      [1.5, 3.75, 'General Kenobi'],
      [3661.2, 3663.2, 'You are a bold one'],
    ]);
  });

  it('parses cleanly in strict mode for hostile text, and the text round-trips', () => {
    const cues = parseVttStrict(toVtt(hostile));
    expect(cues).toHaveLength(9);
    const decoded = cues.map((c) =>
      c.text.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&'),
    );
    expect(decoded).toContain("italic & <3 'q' a < b > c x<y and y>z fc &lt;3 a <b and c> d");
    expect(decoded).toContain('NOTE not a note\nWEBVTT');
    expect(cues.every((c) => c.endTime > c.startTime)).toBe(true);
  });

  it('an empty transcript is a valid header-only document', () => {
    expect(toVtt([])).toBe('WEBVTT\n');
    expect(parseVttStrict(toVtt([]))).toEqual([]);
  });
});

describe('txt and md', () => {
  const metadata = { title: 'A *talk*\nabout things', channel: 'Chan', duration: 3725 };

  it('txt has one line per segment and no timing', () => {
    expect(toTxt(segments)).toBe('Hello there\nGeneral Kenobi\nYou are a bold one\n');
    expect(toTxt(hostile).split('\n').filter(Boolean)).toHaveLength(9);
    expect(toTxt(hostile)).not.toMatch(/\n\n/);
  });

  it('md with timestamps: heading, channel and duration lines, Transcript heading, [M:SS] lines', () => {
    expect(toMarkdown({ segments, metadata, includeTimestamps: true })).toBe(
      '# A *talk* about things\n\n**Channel:** Chan  \n**Duration:** 1:02:05\n\n## Transcript\n\n' +
        '[0:00] Hello there\n[0:01] General Kenobi\n[1:01:01] You are a bold one\n',
    );
  });

  it('md without timestamps has bare lines', () => {
    const doc = toMarkdown({ segments, metadata: { ...metadata, duration: 59 }, includeTimestamps: false });
    expect(doc).toBe(
      '# A *talk* about things\n\n**Channel:** Chan  \n**Duration:** 0:59\n\n## Transcript\n\n' +
        'Hello there\nGeneral Kenobi\nYou are a bold one\n',
    );
  });

  it('plain-text mode joins segment text and counts the original segments', () => {
    expect(toPlainText(segments)).toEqual({
      text: 'Hello there General Kenobi You are a bold one',
      segmentCount: 3,
    });
  });
});

describe('renderDocument', () => {
  it('dispatches by format and declares utf-8 content types', () => {
    const input = { segments, metadata: { title: 't', channel: 'c', duration: 1 }, includeTimestamps: true };
    expect(renderDocument('srt', input)).toBe(toSrt(segments));
    expect(renderDocument('vtt', input)).toBe(toVtt(segments));
    expect(renderDocument('txt', input)).toBe(toTxt(segments));
    expect(renderDocument('md', input)).toBe(toMarkdown(input));
    expect(CONTENT_TYPES).toEqual({
      json: 'application/json; charset=utf-8',
      srt: 'text/srt; charset=utf-8',
      vtt: 'text/vtt; charset=utf-8',
      txt: 'text/plain; charset=utf-8',
      md: 'text/markdown; charset=utf-8',
    });
  });
});

// Regression cases of youtube-transcript-api 1.2.6's formatter fixes, kept as ours.
describe('timestamps and arrows at the edges', () => {
  it('an SRT end time of 1.9996 s renders 00:00:02,000, never a 1000-millisecond field', () => {
    const doc = toSrt([{ text: 'almost two', start: 0, duration: 1.9996 }]);
    expect(doc).toBe('1\n00:00:00,000 --> 00:00:02,000\nalmost two\n');
    expect(parseSrtStrict(doc)).toHaveLength(1);
    // the carry reaches the minutes and the hours too
    expect(toSrt([{ text: 'x', start: 3599.9996, duration: 1 }])).toContain('01:00:00,000 --> 01:00:01,000');
    expect(toVtt([{ text: 'x', start: 59.9996, duration: 0.5 }])).toContain('00:01:00.000 --> 00:01:00.500');
  });

  it('a cue text containing --> never breaks a WebVTT cue: the arrow becomes ->', () => {
    const doc = toVtt([
      { text: 'before --> after', start: 0, duration: 1 },
      { text: '-->', start: 1, duration: 1 },
      { text: 'a ----> b', start: 2, duration: 1 },
    ]);
    const cues = parseVttStrict(doc);
    // the document escapes `>` as `&gt;` (escapeVtt), so `->` reads `-&gt;` in the cue's source
    expect(cues.map((c) => c.text)).toEqual(['before -&gt; after', '-&gt;', 'a -&gt; b']);
    // every `-->` left in the document is a timing line's
    const arrows = doc.split('\n').filter((line) => line.includes('-->'));
    expect(arrows).toHaveLength(3);
    for (const line of arrows)
      expect(line).toMatch(/^\d{2}:\d{2}:\d{2}\.\d{3} --> \d{2}:\d{2}:\d{2}\.\d{3}$/);
  });
});

import { readSynthetic, generateAsrJson3 } from '@subx/testing/fake-youtube';
import { describe, expect, it } from 'vitest';
import {
  cleanText,
  decodeEntities,
  detectFormat,
  parseTimedText,
  removeRollingRepetition,
} from './timedtext.ts';

const MANUAL = [
  'Welcome to The Great War.',
  'Tom & Jerry didn\'t say "hello"',
  'This is really important',
  '- First speaker - Second speaker',
  'Zürich, 1919 — the winter',
  '5 < 7 and 9 > 3',
  'The end.',
];
const ASR_TEXT =
  "so in nineteen nineteen the white army retreats east across siberia [Music] and it's cold out there";

describe('parseTimedText on the synthetic bodies', () => {
  it.each(['manual-en.json3', 'manual-en.srv3.xml', 'manual-en.srv1.xml'])(
    '%s: entities decoded, markup stripped, empty cues dropped',
    (file) => {
      const body = readSynthetic(`captions/${file}`);
      const segs = parseTimedText(body);
      expect(segs.map((s) => s.text)).toEqual(MANUAL);
      expect(segs[1]).toEqual({ text: MANUAL[1], start: 2.5, duration: 3 });
      expect(segs.every((s) => !s.text.includes('\n') && s.text.trim() === s.text)).toBe(true);
    },
  );

  it('srv1 without dur counts 0', () => {
    const segs = parseTimedText(readSynthetic('captions/manual-en.srv1.xml'));
    expect(segs.at(-1)).toEqual({ text: 'The end.', start: 16.5, duration: 0 });
  });

  it.each(['asr-en.json3', 'asr-en.srv3.xml', 'asr-en.srv1.xml'])(
    '%s: rolling repetition removed so the text reads once',
    (file) => {
      const segs = parseTimedText(readSynthetic(`captions/${file}`), { dedupeRolling: true });
      expect(segs.map((s) => s.text).join(' ')).toBe(ASR_TEXT);
      // a cue that is only repetition extends the cue it repeats
      expect(segs.find((s) => s.text === '[Music]')).toEqual({ text: '[Music]', start: 8, duration: 5 });
    },
  );

  it('keeps repetition when not asked to (manual tracks)', () => {
    const segs = parseTimedText(readSynthetic('captions/asr-en.srv1.xml'));
    expect(segs.map((s) => s.text)).toContain('so in nineteen nineteen the white army retreats');
  });

  it('joins word-level segments of an event', () => {
    const segs = parseTimedText(readSynthetic('captions/asr-en.json3'), { dedupeRolling: true });
    expect(segs[0]).toEqual({ text: 'so in nineteen nineteen', start: 0.16, duration: 4.08 });
  });

  it('with words: a word-timed event gives its words (segs[].tOffsetMs), each ending where the next starts', () => {
    const segs = parseTimedText(readSynthetic('captions/asr-en.json3'), { dedupeRolling: true, words: true });
    expect(segs[0]).toEqual({
      text: 'so in nineteen nineteen',
      start: 0.16,
      duration: 4.08,
      words: [
        { text: 'so', start: 0.16, end: 0.4 },
        { text: 'in', start: 0.4, end: 0.64 },
        { text: 'nineteen', start: 0.64, end: 1.12 },
        { text: 'nineteen', start: 1.12, end: 4.24 },
      ],
    });
    // entities decoded in words too
    expect(segs.find((s) => s.text === "and it's cold")?.words?.map((w) => w.text)).toEqual([
      'and',
      "it's",
      'cold',
    ]);
    // a repeated line of whole text, and a cue cut down to its new part, time no words
    expect(segs.find((s) => s.text === 'east across siberia')).not.toHaveProperty('words');
    expect(segs.find((s) => s.text === '[Music]')).not.toHaveProperty('words');
  });

  it('with words: a manual cue (one seg of many words) times none; without the option none at all', () => {
    expect(
      parseTimedText(readSynthetic('captions/manual-en.json3'), { words: true }).some((s) => s.words),
    ).toBe(false);
    expect(
      parseTimedText(readSynthetic('captions/asr-en.json3'), { dedupeRolling: true }).some((s) => s.words),
    ).toBe(false);
  });

  it('detects the format from the body, not from the URL', () => {
    expect(detectFormat('  {"events":[]}')).toBe('json3');
    expect(detectFormat(readSynthetic('captions/manual-en.srv3.xml'))).toBe('srv3');
    expect(detectFormat(readSynthetic('captions/manual-en.srv1.xml'))).toBe('srv1');
    expect(() => detectFormat('WEBVTT\n\n00:00.000 --> 00:01.000\nhi')).toThrow();
    expect(() => parseTimedText('{"events": ')).toThrow(/not JSON/);
  });

  it('parses the 3-hour auto-generated body: one segment per line, newline events dropped', () => {
    const body = generateAsrJson3({ durationSec: 3 * 3600, events: 6000 });
    const segs = parseTimedText(body, { dedupeRolling: true });
    expect(segs.length).toBeGreaterThan(2900);
    expect(segs.length).toBeLessThanOrEqual(3000);
    expect(segs.at(-1)!.start).toBeLessThan(3 * 3600);
  });
});

describe('text cleaning', () => {
  it('decodes named, decimal and hex entities and leaves unknown ones', () => {
    expect(decodeEntities('&amp; &lt; &gt; &quot; &#39; &#x2014; &nbsp;&hellip; &bogus;')).toBe(
      '& < > " \' —  … &bogus;',
    );
  });
  it('turns <br> into a line break and never leaves blank lines', () => {
    expect(cleanText('a<br/>b<br><br>  <i>c</i>\n\n\nd')).toBe('a\nb\nc\nd');
  });
});

describe('escaped text is content, markup is not', () => {
  it.each([
    ['I &lt;3 you', 'I <3 you'],
    ['a &lt; b', 'a < b'],
    ['x&lt;y and y&gt;z', 'x<y and y>z'],
    ['a &lt;b and c&gt; d', 'a <b and c> d'],
    ['&lt;i&gt;srv1 markup&lt;/i&gt;', 'srv1 markup'],
    ['<font color="#E5E5E5">f</font> <c.colorE5E5E5>c</c> <s t="0" ac="255">s</s>', 'f c s'],
  ])('%s → %s', (raw, text) => {
    expect(cleanText(raw)).toBe(text);
  });
});

describe('removeRollingRepetition', () => {
  it('removes the longest repeated line prefix and word-by-word growth', () => {
    const out = removeRollingRepetition([
      { text: 'one two', start: 0, duration: 1 },
      { text: 'one two three', start: 1, duration: 1 },
      { text: 'one two three\nfour five', start: 2, duration: 1 },
      { text: 'four five', start: 3, duration: 1 },
      { text: 'six', start: 4, duration: 1 },
    ]);
    expect(out).toEqual([
      { text: 'one two', start: 0, duration: 1 },
      { text: 'three', start: 1, duration: 1 },
      { text: 'four five', start: 2, duration: 2 },
      { text: 'six', start: 4, duration: 1 },
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import { publicSegments, publicSegmentsJson } from './segments.ts';

describe('publicSegments', () => {
  // A protobuf message or a cached value may carry more than the public fields, in another order.
  const carried = [
    { duration: 1.5, start: 0, text: 'one', speaker: 'x' },
    { start: 1.5, text: 'two "quoted"', duration: 2 },
  ];

  it('keeps text, start and duration, in that order, and nothing else', () => {
    const out = publicSegments(carried);
    expect(out).toEqual([
      { text: 'one', start: 0, duration: 1.5 },
      { text: 'two "quoted"', start: 1.5, duration: 2 },
    ]);
    expect(Object.keys(out[0]!)).toEqual(['text', 'start', 'duration']);
  });

  it('renders the JSON array the gateway answers with', () => {
    expect(publicSegmentsJson(carried)).toBe(
      '[{"text":"one","start":0,"duration":1.5},{"text":"two \\"quoted\\"","start":1.5,"duration":2}]',
    );
    expect(publicSegmentsJson([])).toBe('[]');
  });

  it('with words: each timed segment carries its words as {text, start, end}; an untimed one none', () => {
    const timed = [
      {
        text: 'hi there',
        start: 1,
        duration: 2,
        words: [
          { text: 'hi', start: 1, end: 1.4, conf: 1 },
          { text: 'there', start: 1.5, end: 3 },
        ],
      },
      { text: 'plain', start: 3, duration: 1, words: [] },
      { text: 'cue', start: 4, duration: 1 },
    ];
    expect(publicSegmentsJson(timed, true)).toBe(
      '[{"text":"hi there","start":1,"duration":2,"words":[{"text":"hi","start":1,"end":1.4},{"text":"there","start":1.5,"end":3}]},' +
        '{"text":"plain","start":3,"duration":1},{"text":"cue","start":4,"duration":1}]',
    );
    expect(publicSegmentsJson(timed)).not.toContain('words');
  });
});

import { describe, expect, it } from 'vitest';
import { normalisedWords, wordErrorRate } from './speech.ts';

describe('word error rate', () => {
  it('is 0 for the same words whatever the case, punctuation and number spelling', () => {
    expect(wordErrorRate('Ten books, at twenty past nine.', 'ten Books at 20 past 9')).toBe(0);
    expect(normalisedWords('Call 911 or 1,234.')).toEqual([
      'call',
      'nine',
      'one',
      'one',
      'or',
      'one',
      'two',
      'three',
      'four',
    ]);
  });

  it('counts substitutions, deletions and insertions against the reference length', () => {
    expect(wordErrorRate('the cat sat on the mat', 'the cat sat on a mat')).toBeCloseTo(1 / 6);
    expect(wordErrorRate('the cat sat on the mat', 'the cat on the mat')).toBeCloseTo(1 / 6);
    expect(wordErrorRate('the cat sat', 'the big cat sat down')).toBeCloseTo(2 / 3);
    expect(wordErrorRate('one two', '')).toBe(1);
    expect(wordErrorRate('', '')).toBe(0);
  });
});

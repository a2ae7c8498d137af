import { describe, expect, it } from 'vitest';
import { Errors } from './index.ts';
import { isAre, plural } from './plural.ts';

describe('plural', () => {
  it('is singular for exactly one and plural otherwise', () => {
    expect(plural(1, 'credit')).toBe('1 credit');
    expect(plural(0, 'credit')).toBe('0 credits');
    expect(plural(2, 'credit')).toBe('2 credits');
    expect(plural(1.5, 'credit')).toBe('1.5 credits');
    expect(plural(-1, 'credit')).toBe('-1 credit');
    expect(plural(2, 'reply', 'replies')).toBe('2 replies');
    expect(isAre(1)).toBe('is');
    expect(isAre(0)).toBe('are');
  });

  it('makes the error messages that carry counts read right at one', () => {
    expect(Errors.insufficientCredits(1, 1).message).toBe(
      'Insufficient credits: this request needs up to 1 credit and 1 is available.',
    );
    expect(Errors.insufficientCredits(6, 0).message).toBe(
      'Insufficient credits: this request needs up to 6 credits and 0 are available.',
    );
    expect(Errors.notEnoughComments('abc', 1).message).toBe(
      'Video abc has 1 comment; analysis needs at least 10.',
    );
  });
});

import { describe, expect, it } from 'vitest';
import { comment } from '../../test/fixtures/comments.ts';
import { verifyQuotes } from './quotes.ts';
import { truncateAtWord } from './text.ts';

describe('truncateAtWord', () => {
  it('cuts at a word boundary, drops trailing punctuation and adds an ellipsis', () => {
    expect(truncateAtWord('The quick brown fox, jumps over the lazy dog', 22)).toBe('The quick brown fox…');
    expect(truncateAtWord('short text', 50)).toBe('short text');
    const out = truncateAtWord('word '.repeat(100), 200);
    expect(out.length).toBeLessThanOrEqual(200);
    expect(out.endsWith('word…')).toBe(true);
  });
});

describe('verifyQuotes', () => {
  const sample = [
    comment('The float test tip saved my starter, I was about to throw it away', { author: '@anna' }),
    comment(`Long review: ${'this recipe is great and '.repeat(20)}the end`, { author: '@long' }),
    comment('Music is way too loud, had to turn on captions', { author: '@bo' }),
  ];

  it('keeps quotes that occur in the sample (whole or a contiguous part) and drops invented ones', () => {
    const out = verifyQuotes(
      [
        { text: 'The float test tip saved my starter', author: '@anna' },
        { text: 'This is the best video on the internet', author: '@anna' },
        { text: 'music is WAY too loud,  had to turn on captions', author: '@bo' },
        { text: 'the', author: '@bo' },
      ],
      sample,
    );
    expect(out).toEqual([
      { text: 'The float test tip saved my starter', author: '@anna' },
      { text: 'Music is way too loud, had to turn on captions', author: '@bo' },
    ]);
  });

  it('takes the author from the matching comment, not from the model', () => {
    const out = verifyQuotes([{ text: 'had to turn on captions', author: '@somebody-else' }], sample);
    expect(out).toEqual([{ text: 'had to turn on captions', author: '@bo' }]);
  });

  it('truncates long quotes at a word boundary with an ellipsis', () => {
    const [q] = verifyQuotes([{ text: sample[1]!.text, author: '@long' }], sample);
    expect(q!.text.length).toBeLessThanOrEqual(200);
    expect(q!.text.endsWith('…')).toBe(true);
    expect(sample[1]!.text.startsWith(q!.text.slice(0, -1))).toBe(true);
  });
});

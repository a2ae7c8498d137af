import { describe, expect, it } from 'vitest';
import { comment, dividedComments, sourdoughComments } from '../../test/fixtures/comments.ts';
import { analyzeLexicon } from './local-analysis.ts';
import { overallSentiment, scoreComment } from './sentiment.ts';
import { extractThemes } from './themes.ts';

describe('lexicon sentiment', () => {
  it('scores praise positive, complaints negative, and handles negation', () => {
    expect(scoreComment(comment('This is amazing, I love it')).label).toBe('positive');
    expect(scoreComment(comment('Terrible audio, I hate it')).label).toBe('negative');
    expect(scoreComment(comment('This is not good at all')).label).toBe('negative');
    expect(scoreComment(comment('What brand is that pan?')).label).toBe('neutral');
  });

  it('is positive when praise clearly dominates, mixed when balanced or mostly neutral', () => {
    expect(analyzeLexicon(sourdoughComments()).sentiment).toBe('positive');
    expect(analyzeLexicon(dividedComments()).sentiment).toBe('mixed');
    const neutral = ['What pan is that?', 'Which flour brand?', 'Where do you live?', 'Is this in Celsius?'];
    expect(overallSentiment(neutral.map((t) => scoreComment(comment(t)))).sentiment).toBe('mixed');
    const angry = ['Terrible video', 'Awful, waste of time', 'I hate this, boring', 'Bad advice, wrong'];
    expect(overallSentiment(angry.map((t) => scoreComment(comment(t)))).sentiment).toBe('negative');
  });
});

describe('themes and quotes of the offline analysis', () => {
  it('finds the recurring subjects of the comments, at most five', () => {
    const result = analyzeLexicon(sourdoughComments());
    expect(result.themes.length).toBeGreaterThan(0);
    expect(result.themes.length).toBeLessThanOrEqual(5);
    const joined = result.themes.join(' | ');
    expect(joined).toMatch(/audio|music/);
    expect(joined).toMatch(/starter|loaf|bread|recipe/);
  });

  it('quotes real comments of the sample, at most ten, one per author', () => {
    const sample = sourdoughComments();
    const { keyQuotes } = analyzeLexicon(sample);
    expect(keyQuotes.length).toBeGreaterThan(3);
    expect(keyQuotes.length).toBeLessThanOrEqual(10);
    expect(new Set(keyQuotes.map((q) => q.author)).size).toBe(keyQuotes.length);
    for (const q of keyQuotes) {
      const source = sample.find((c) => c.author === q.author)!;
      expect(source.text.startsWith(q.text.replace(/…$/u, ''))).toBe(true);
    }
  });

  it('needs a term in at least two comments to call it a theme', () => {
    expect(
      extractThemes(['pineapple pizza forever', 'nothing in common here', 'totally different words']),
    ).toEqual([]);
  });
});

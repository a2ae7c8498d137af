import { describe, expect, it } from 'vitest';
import { comment, NOW_S } from '../../test/fixtures/comments.ts';
import { sampleComments } from './sampling.ts';

/** 60 comments where likes and recency are unrelated (so the two halves differ). */
function pool() {
  return Array.from({ length: 60 }, (_, i) =>
    comment(`comment number ${i} with some words`, {
      id: `c${i}`,
      likes: (i * 37) % 61,
      publishedAt: NOW_S - ((i * 53) % 97) * 3600,
    }),
  );
}

describe('sampleComments', () => {
  it('takes exactly half the sample from the top liked and half from the most recent, without duplicates', () => {
    const all = pool();
    const { comments, fromTop, fromRecent } = sampleComments(all, 20);
    expect(comments).toHaveLength(20);
    expect(fromTop).toBe(10);
    expect(fromRecent).toBe(10);
    expect(new Set(comments.map((c) => c.id)).size).toBe(20);

    const topTen = [...all].sort((a, b) => b.likes - a.likes).slice(0, 10);
    expect(comments.slice(0, 10).map((c) => c.id)).toEqual(topTen.map((c) => c.id));
    const recentNotTop = [...all]
      .sort((a, b) => b.publishedAt - a.publishedAt)
      .filter((c) => !topTen.includes(c))
      .slice(0, 10);
    expect(comments.slice(10).map((c) => c.id)).toEqual(recentNotTop.map((c) => c.id));
  });

  it('fills the recent half from the next most recent when a recent comment is already a top one', () => {
    const a = comment('most liked and newest', { id: 'a', likes: 100, publishedAt: NOW_S });
    const b = comment('second most liked, old', { id: 'b', likes: 50, publishedAt: NOW_S - 9000 });
    const c = comment('no likes, second newest', { id: 'c', likes: 0, publishedAt: NOW_S - 10 });
    const d = comment('no likes, third newest', { id: 'd', likes: 0, publishedAt: NOW_S - 20 });
    const { comments } = sampleComments([a, b, c, d], 4);
    expect(comments.map((x) => x.id)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('gives the odd one to the top half, drops duplicate and empty comments, and never exceeds the pool', () => {
    const all = pool();
    const odd = sampleComments(all, 11);
    expect([odd.fromTop, odd.fromRecent]).toEqual([6, 5]);
    const dupes = [...all.slice(0, 12), ...all.slice(0, 12), comment('   ', { id: 'blank' })];
    const small = sampleComments(dupes, 50);
    expect(small.comments).toHaveLength(12);
    expect(new Set(small.comments.map((c) => c.id)).size).toBe(12);
  });
});

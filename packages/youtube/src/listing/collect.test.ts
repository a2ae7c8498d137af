import { describe, expect, it } from 'vitest';
import { silentLogger } from '@subx/ports';
import { LISTING_MAX_PAGES, LISTING_MAX_VIDEOS, collectPages, listingMax, type Page } from './collect.ts';

/** An endless listing: page n holds `size` items `n-0…` and points at page n+1. */
function endless(size: number, calls: string[] = []) {
  return {
    first: { items: Array.from({ length: size }, (_, i) => `0-${i}`), nextToken: 't1' } as Page<string>,
    fetchPage: async (token: string): Promise<Page<string>> => {
      calls.push(token);
      const n = Number(token.slice(1));
      return { items: Array.from({ length: size }, (_, i) => `${n}-${i}`), nextToken: `t${n + 1}` };
    },
  };
}

describe('collectPages', () => {
  it('stops at max, in order, reading only the pages it needs, and says more is there', async () => {
    const calls: string[] = [];
    const r = await collectPages({ ...endless(30, calls), listing: { max: 75 }, what: 'test' });
    expect(r.items).toHaveLength(75);
    expect(r.items.slice(28, 32)).toEqual(['0-28', '0-29', '1-0', '1-1']);
    expect(r.items.at(-1)).toBe('2-14');
    expect(calls).toEqual(['t1', 't2']);
    expect(r).toMatchObject({ hasMore: true, pages: 2 });
  });

  it('max exactly at a page end with a token left: more; at the end of the listing: no more', async () => {
    expect((await collectPages({ ...endless(30), listing: { max: 60 }, what: 'test' })).hasMore).toBe(true);
    const finite = {
      first: { items: ['a', 'b'], nextToken: 'x' },
      fetchPage: async () => ({ items: ['c'] }),
    };
    expect(await collectPages({ ...finite, listing: { max: 3 }, what: 'test' })).toEqual({
      items: ['a', 'b', 'c'],
      hasMore: false,
      pages: 1,
    });
  });

  it('ends on an empty last page and on a token seen before (a loop), without asking again', async () => {
    const calls: string[] = [];
    const looping = {
      first: { items: ['a'], nextToken: 'x' },
      fetchPage: async (t: string) => {
        calls.push(t);
        return t === 'x' ? { items: ['b'], nextToken: 'y' } : { items: ['c'], nextToken: 'x' };
      },
    };
    const r = await collectPages({ ...looping, listing: { max: 100 }, what: 'test' });
    expect(r.items).toEqual(['a', 'b', 'c']);
    expect(calls).toEqual(['x', 'y']);
    const emptyEnd = { first: { items: ['a'], nextToken: 'x' }, fetchPage: async () => ({ items: [] }) };
    expect((await collectPages({ ...emptyEnd, listing: { max: 10 }, what: 'test' })).items).toEqual(['a']);
  });

  it('drops repeats by key when asked (channel tabs), keeps them otherwise (playlists)', async () => {
    const repeating = {
      first: { items: ['a', 'b'], nextToken: 'x' },
      fetchPage: async () => ({ items: ['b', 'c'] }),
    };
    expect(
      (await collectPages({ ...repeating, listing: { max: 10 }, what: 't', keyOf: (s) => s })).items,
    ).toEqual(['a', 'b', 'c']);
    expect((await collectPages({ ...repeating, listing: { max: 10 }, what: 't' })).items).toEqual([
      'a',
      'b',
      'b',
      'c',
    ]);
  });

  it(`reads at most ${LISTING_MAX_PAGES} pages whatever the platform keeps offering`, async () => {
    const calls: string[] = [];
    const warnings: object[] = [];
    const r = await collectPages({
      ...endless(1, calls),
      listing: { max: LISTING_MAX_VIDEOS },
      what: 'test',
      logger: { ...silentLogger, warn: (o) => void warnings.push(o) },
    });
    expect(calls).toHaveLength(LISTING_MAX_PAGES);
    expect(r).toMatchObject({ hasMore: true, pages: LISTING_MAX_PAGES });
    expect(r.items).toHaveLength(LISTING_MAX_PAGES + 1);
    expect(warnings).toHaveLength(1);
  });

  it('a listing past its deadline is UPSTREAM_TIMEOUT, never a silently shorter list', async () => {
    const slow = {
      first: { items: ['a'], nextToken: 't1' },
      fetchPage: async (t: string) => {
        await new Promise((r) => setTimeout(r, 30));
        return { items: [t], nextToken: `${t}x` };
      },
    };
    await expect(
      collectPages({ ...slow, listing: { max: 1000, deadlineMs: 50 }, what: 'slow' }),
    ).rejects.toMatchObject({ code: 'UPSTREAM_TIMEOUT', retryable: true });
  });

  it('stops before the next page once the caller aborts (gRPC deadline or cancellation)', async () => {
    const controller = new AbortController();
    const calls: string[] = [];
    const listing = endless(10, calls);
    const fetchPage = async (t: string) => {
      if (t === 't2') controller.abort();
      return listing.fetchPage(t);
    };
    await expect(
      collectPages({
        first: listing.first,
        fetchPage,
        listing: { max: 1000, signal: controller.signal },
        what: 'x',
      }),
    ).rejects.toMatchObject({ code: 'TIMEOUT' });
    expect(calls).toEqual(['t1', 't2']);
  });

  it.each([0, -1, 1.5, LISTING_MAX_VIDEOS + 1, Number.NaN])('max %s is INVALID_REQUEST', (max) => {
    expect(() => listingMax(max)).toThrow(expect.objectContaining({ code: 'INVALID_REQUEST' }));
  });
});

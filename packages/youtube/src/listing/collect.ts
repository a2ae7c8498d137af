import { Errors } from '@subx/errors';
import type { Logger } from '../types.ts';

/**
 * Following continuations of a long listing (a playlist or a channel tab, for bulk jobs) with
 * every bound in one place: at most `LISTING_MAX_VIDEOS` items, `LISTING_MAX_PAGES` pages and
 * `LISTING_DEADLINE_MS` in all (each page is bounded by the transport's own timeout and retries), and a
 * caller's AbortSignal (the gRPC call's deadline or cancellation) checked before every page.
 */

/** The most a listing returns: the largest job a tier may create (enterprise, 10,000 items). */
export const LISTING_MAX_VIDEOS = 10_000;
/**
 * The most pages one listing reads. Channel tabs hold 30 (videos, streams) or 48 (Shorts) items a
 * page and playlists 100, so 10,000 items need at most 334; the rest is head room for short pages.
 */
export const LISTING_MAX_PAGES = 400;
/** Wall-clock bound of one listing when the caller gives no earlier one. */
export const LISTING_DEADLINE_MS = 300_000;

export interface ListingOptions {
  /** How many items to return, 1..LISTING_MAX_VIDEOS. */
  max: number;
  /** Aborted when the caller gives up (a gRPC deadline or cancellation). */
  signal?: AbortSignal;
  /** Wall-clock bound of the listing (default LISTING_DEADLINE_MS). */
  deadlineMs?: number;
}

export interface Page<T> {
  items: T[];
  nextToken?: string;
}

export interface Collected<T> {
  items: T[];
  /** The platform has more past what was returned (stopped at `max` or at the page cap). */
  hasMore: boolean;
  /** Continuation pages read (the first page not counted). */
  pages: number;
}

/** `max` as a listing takes it, or INVALID_REQUEST naming the bound. */
export function listingMax(max: number): number {
  if (!Number.isInteger(max) || max < 1 || max > LISTING_MAX_VIDEOS)
    throw Errors.invalidRequest(`max must be an integer between 1 and ${LISTING_MAX_VIDEOS}`);
  return max;
}

/**
 * The first page's items, then continuation pages in order until `max` items, the end of the listing
 * (no token, an empty page, or a token seen before), the page cap (logged, `hasMore`) or the deadline
 * (UPSTREAM_TIMEOUT: a job must not take a cut listing for the whole one). `keyOf` drops repeats (channel
 * tabs repeat an item across pages when uploads shift them; a playlist may hold a video twice on purpose).
 */
export async function collectPages<T>(opts: {
  first: Page<T>;
  fetchPage: (token: string) => Promise<Page<T>>;
  listing: ListingOptions;
  what: string;
  keyOf?: (item: T) => string;
  logger?: Logger | undefined;
}): Promise<Collected<T>> {
  const max = listingMax(opts.listing.max);
  const started = performance.now();
  const deadlineMs = opts.listing.deadlineMs ?? LISTING_DEADLINE_MS;
  const items: T[] = [];
  const seenKeys = new Set<string>();
  const push = (page: Page<T>) => {
    for (const item of page.items) {
      if (items.length >= max) return true;
      const key = opts.keyOf?.(item);
      if (key !== undefined) {
        if (seenKeys.has(key)) continue;
        seenKeys.add(key);
      }
      items.push(item);
    }
    return false;
  };
  let cut = push(opts.first);
  let token = opts.first.nextToken;
  const seenTokens = new Set<string>();
  let pages = 0;
  while (!cut && items.length < max && token && !seenTokens.has(token)) {
    if (opts.listing.signal?.aborted)
      throw Errors.timeout(`Listing ${opts.what} was cancelled after ${pages + 1} pages.`);
    if (performance.now() - started > deadlineMs)
      throw Errors.upstreamTimeout(`Listing ${opts.what} took longer than ${deadlineMs} ms.`);
    if (pages >= LISTING_MAX_PAGES) {
      opts.logger?.warn({ what: opts.what, pages, items: items.length }, 'listing stopped at the page cap');
      return { items, hasMore: true, pages };
    }
    seenTokens.add(token);
    const page = await opts.fetchPage(token);
    pages++;
    if (page.items.length === 0 && !page.nextToken) {
      token = undefined;
      break;
    }
    cut = push(page);
    token = page.nextToken;
  }
  const more = cut || (items.length >= max && token !== undefined && !seenTokens.has(token));
  return { items, hasMore: more, pages };
}

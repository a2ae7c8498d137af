/** Search: one page of the platform's results, or the first `max` videos of a query (search jobs). */
import { AppError, Errors } from '@subx/errors';
import { collectPages, listingMax, type ListingOptions } from '../listing/collect.ts';
import { searchParams, type SearchFilters } from '../search/params.ts';
import { parseSearchPage, type SearchPage, type SearchResult } from '../search/parse.ts';
import { UpstreamHttpError } from '../transport.ts';
import type { YouTubeOperations } from './context.ts';

/** The longest query the platform's search box takes (and the public API accepts). */
export const SEARCH_QUERY_MAX = 200;

export interface SearchRequest extends SearchFilters {
  query: string;
  /** The token of a previous page's `nextToken`: that page's next one (the filters are in the token). */
  continuation?: string;
}

export interface SearchVideosRequest extends ListingOptions {
  query: string;
  filters?: Omit<SearchFilters, 'type'>;
}

export interface SearchVideos {
  videos: SearchResult[];
  correctedQuery?: string;
  /** The search goes on past `videos`. */
  hasMore: boolean;
}

function checkedQuery(query: string): string {
  const q = query.trim();
  if (q.length === 0 || q.length > SEARCH_QUERY_MAX)
    throw Errors.invalidRequest(`q must be 1 to ${SEARCH_QUERY_MAX} characters`, { field: 'q' });
  return q;
}

/** 400 INVALID_ARGUMENT from the platform for a continuation: the token is not one it issued. */
function isRefusedToken(err: unknown): boolean {
  const http = err instanceof AppError && err.code === 'UPSTREAM_ERROR' ? err.cause : undefined;
  return http instanceof UpstreamHttpError && http.status === 400;
}

/** A page as the WEB client, keeping only the asked kind of result (`all`: every kind). */
async function page(
  yt: YouTubeOperations,
  body: Record<string, unknown>,
  type: SearchFilters['type'],
  lease = yt.innertube.lease(),
): Promise<SearchPage> {
  const web = yt.innertube.config.webClient;
  let answer: unknown;
  try {
    answer = await yt.innertube.post('search', web, body, { lease });
  } catch (err) {
    if (body.continuation !== undefined && isRefusedToken(err))
      throw Errors.invalidRequest('cursor is not a search cursor the platform accepts (or it expired)', {
        field: 'cursor',
      });
    throw err;
  }
  const parsed = parseSearchPage(answer);
  if (type === 'all') return parsed;
  return { ...parsed, results: parsed.results.filter((r) => r.kind === type) };
}

/** One page of results: the first for the query and filters, or the page a continuation names. */
export async function search(yt: YouTubeOperations, req: SearchRequest): Promise<SearchPage> {
  const query = checkedQuery(req.query);
  if (req.continuation) return page(yt, { continuation: req.continuation }, req.type);
  return page(yt, { query, params: searchParams(req) }, req.type);
}

/**
 * The first `max` videos of a query, in the platform's order, following continuations on one session
 * with the bounds of every long listing (`collectPages`); a video the platform repeats across pages
 * counts once.
 */
export async function searchVideos(yt: YouTubeOperations, req: SearchVideosRequest): Promise<SearchVideos> {
  const query = checkedQuery(req.query);
  const max = listingMax(req.max);
  const lease = yt.innertube.lease();
  const first = await page(
    yt,
    { query, params: searchParams({ ...req.filters, type: 'video' }) },
    'video',
    lease,
  );
  const collected = await collectPages<SearchResult>({
    first: { items: first.results, ...(first.nextToken ? { nextToken: first.nextToken } : {}) },
    fetchPage: async (token) => {
      const p = await page(yt, { continuation: token }, 'video', lease);
      return { items: p.results, ...(p.nextToken ? { nextToken: p.nextToken } : {}) };
    },
    listing: { ...req, max },
    what: `the search for "${query}"`,
    keyOf: (v) => v.id,
    logger: yt.logger,
  });
  return {
    videos: collected.items,
    ...(first.correctedQuery ? { correctedQuery: first.correctedQuery } : {}),
    hasMore: collected.hasMore,
  };
}

import { createHash } from 'node:crypto';
import { extractorV1 } from '@subx/contracts';
import { Errors } from '@subx/errors';
import { searchPrice } from '@subx/credits';
import { searchFiltersOf } from '@subx/public-api';
import { rateLimitBody } from '../access/rate-limit.ts';
import { apiOperation } from './operations.ts';
import { routeOptions } from '../http/route-context.ts';
import type { RouteRegistrar } from '../http/route-context.ts';
import { admissionOf, withReservation } from '../http/reservation.ts';

interface SearchQuery {
  query?: string;
  /** Alias of `query`. */
  q?: string;
  type: 'video' | 'channel' | 'playlist' | 'all';
  cursor?: string;
  upload_date?: string;
  duration?: string;
  sort?: string;
  features?: string;
}

const TYPES: Record<SearchQuery['type'], extractorV1.SearchType> = {
  video: extractorV1.SearchType.SEARCH_TYPE_VIDEO,
  channel: extractorV1.SearchType.SEARCH_TYPE_CHANNEL,
  playlist: extractorV1.SearchType.SEARCH_TYPE_PLAYLIST,
  all: extractorV1.SearchType.SEARCH_TYPE_ALL,
};

const badCursor = () =>
  Errors.invalidRequest('cursor is not a next_cursor of this search (same query, type and filters)', {
    field: 'cursor',
  });

/**
 * The search a cursor belongs to. The platform's token carries its own filters, so a token sent with
 * another query would silently page through a different search: the cursor binds the token to the
 * query, type and filters it came from, and any other search refuses it.
 */
function bindingOf(query: string, type: string, filters: extractorV1.SearchFilters): string {
  return createHash('sha256')
    .update(
      JSON.stringify([query, type, filters.uploadDate, filters.duration, filters.sort, filters.features]),
    )
    .digest('base64url')
    .slice(0, 16);
}

/** `next_cursor`: base64url of `{ b: binding, t: the platform's token }`. */
function encodeCursor(binding: string, token: string): string {
  return Buffer.from(JSON.stringify({ b: binding, t: token })).toString('base64url');
}

function decodeCursor(cursor: string, binding: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw badCursor();
  }
  if (typeof parsed !== 'object' || parsed === null) throw badCursor();
  const { b, t } = parsed as { b?: unknown; t?: unknown };
  if (b !== binding || typeof t !== 'string' || t.length === 0) throw badCursor();
  return t;
}

function featuresOf(csv: string | undefined): string[] {
  if (!csv) return [];
  return [
    ...new Set(
      csv
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ].sort();
}

const orNull = <T>(value: T | undefined | ''): T | null =>
  value === undefined || value === '' ? null : value;
const num = (value: bigint | undefined) => (value === undefined ? null : Number(value));

/** One result as GET /api/v1/search answers it (search-operations.ts: SearchVideoResult and kin). */
function searchResultJson(r: extractorV1.SearchResult) {
  const common = {
    title: r.title,
    channel: orNull(r.channel),
    channel_id: orNull(r.channelId),
    duration: r.durationSeconds === undefined ? null : Math.round(r.durationSeconds),
    published: orNull(r.publishedText),
    view_count: num(r.viewCount),
    thumbnail: orNull(r.thumbnail),
  };
  if (r.kind === 'channel') {
    return {
      type: 'channel' as const,
      ...common,
      url: `https://www.youtube.com/channel/${r.id}`,
      handle: orNull(r.handle),
      subscriber_count: num(r.subscriberCount),
    };
  }
  if (r.kind === 'playlist') {
    return {
      type: 'playlist' as const,
      playlist_id: r.id,
      ...common,
      url: `https://www.youtube.com/playlist?list=${r.id}`,
      video_count: num(r.videoCount),
    };
  }
  return {
    type: 'video' as const,
    video_id: r.id,
    ...common,
    url: r.isShort ? `https://www.youtube.com/shorts/${r.id}` : `https://www.youtube.com/watch?v=${r.id}`,
    is_short: r.isShort,
    is_live: r.isLive,
    is_upcoming: r.isUpcoming,
  };
}

/**
 * `query` (or its alias `q`, the name a search box sends): one of them, not two that differ, and
 * not only spaces.
 */
function searchTermsOf(q: Pick<SearchQuery, 'query' | 'q'>): string {
  if (q.query !== undefined && q.q !== undefined && q.query !== q.q)
    throw Errors.invalidRequest('query and its alias q differ: send one of them', { field: 'q' });
  const given = q.query ?? q.q;
  const field = q.query === undefined ? 'q' : 'query';
  if (given === undefined)
    throw Errors.invalidRequest('querystring must have query (or its alias q)', { field: 'query' });
  const query = given.trim();
  if (query.length === 0) throw Errors.invalidRequest(`${field} must not be only spaces`, { field });
  return query;
}

export const registerSearch: RouteRegistrar = (app, ctx) => {
  const spec = apiOperation('search');
  const { credits, backends } = ctx.deps;

  app.get<{ Querystring: SearchQuery }>(spec.path, routeOptions(ctx, spec), async (request) => {
    const q = request.query;
    const query = searchTermsOf(q);
    const filters = searchFiltersOf({ ...q, features: featuresOf(q.features) });
    const binding = bindingOf(query, q.type, filters);
    const continuation = q.cursor === undefined ? '' : decodeCursor(q.cursor, binding);
    const ask: extractorV1.SearchRequest = {
      query,
      type: TYPES[q.type],
      filters,
      continuation,
      cachedOnly: false,
    };
    const toBody = (page: extractorV1.SearchResponse, charge: number) => ({
      query,
      ...(page.correctedQuery ? { corrected_query: page.correctedQuery } : {}),
      results: page.results.map(searchResultJson),
      next_cursor: page.nextContinuation ? encodeCursor(binding, page.nextContinuation) : null,
      cached: page.cached,
      credits_used: charge,
      rate_limit: rateLimitBody(admissionOf(request).rateLimit),
      request_id: request.id,
    });
    const price = searchPrice({}, ctx.pricing);
    if (price === 0) {
      return toBody(await backends.extractor.search(ask, { requestId: request.id }), 0);
    }
    // A page in the cache costs nothing: served without a reservation, whatever the balance.
    const look = await backends.extractor.search({ ...ask, cachedOnly: true }, { requestId: request.id });
    if (look.cached) return toBody(look, 0);
    return withReservation(credits, request, 'search', price, async (reservation) => {
      const page = await backends.extractor.search(ask, { requestId: request.id });
      const charge = searchPrice({ cached: page.cached }, ctx.pricing);
      await reservation.commit(charge);
      return toBody(page, charge);
    });
  });
};

import { createHash } from 'node:crypto';
import { extractorV1 } from '@subx/contracts';
import { Errors } from '@subx/errors';
import type { JsonCache } from '@subx/ports';
import {
  LISTING_MAX_VIDEOS,
  SEARCH_DURATIONS,
  SEARCH_FEATURES,
  SEARCH_QUERY_MAX,
  SEARCH_SORTS,
  UPLOAD_DATES,
  type SearchFeature,
  type SearchFilters,
  type SearchPage,
  type SearchResult,
  type SearchType,
  type SearchVideos,
  type YouTubeClient,
} from '@subx/youtube';

/**
 * Search (Search: one page; ListSearchVideos: the first videos of a search, for search jobs) over the
 * client's `search`/`searchVideos`, so every platform call goes through its egress pacing,
 * quarantine, sessions and circuit breaker. Answers are cached briefly (SEARCH_CACHE_TTL_MS): results
 * pages change by the minute and a continuation token is only good for a while, so the cache serves
 * repeats (a user paging back, retries, several jobs over one query), not freshness.
 */
export interface SearchService {
  search(req: extractorV1.SearchRequest): Promise<extractorV1.SearchResponse>;
  listSearchVideos(
    req: extractorV1.ListSearchVideosRequest,
    signal?: AbortSignal,
  ): Promise<extractorV1.ListSearchVideosResponse>;
}

type YouTube = Pick<YouTubeClient, 'search' | 'searchVideos'>;

const TYPE_OF: Record<number, SearchType> = {
  [extractorV1.SearchType.SEARCH_TYPE_UNSPECIFIED]: 'video',
  [extractorV1.SearchType.SEARCH_TYPE_VIDEO]: 'video',
  [extractorV1.SearchType.SEARCH_TYPE_CHANNEL]: 'channel',
  [extractorV1.SearchType.SEARCH_TYPE_PLAYLIST]: 'playlist',
  [extractorV1.SearchType.SEARCH_TYPE_ALL]: 'all',
};

const bad = (field: string, message: string) => Errors.invalidRequest(message, { field });

function oneOf<T extends string>(field: string, value: string, allowed: readonly T[]): T | undefined {
  if (value === '') return undefined;
  if (!(allowed as readonly string[]).includes(value))
    throw bad(field, `${field} must be one of ${allowed.join(', ')}`);
  return value as T;
}

/** The filters of a request in the client's terms; an unknown value is INVALID_REQUEST naming its field. */
function filtersOf(f: extractorV1.SearchFilters | undefined): Omit<SearchFilters, 'type'> {
  if (!f) return {};
  const uploadDate = oneOf('upload_date', f.uploadDate, UPLOAD_DATES);
  const duration = oneOf('duration', f.duration, SEARCH_DURATIONS);
  const sort = oneOf('sort', f.sort, SEARCH_SORTS);
  const features = [...new Set(f.features)].map(
    (x) => oneOf('features', x, SEARCH_FEATURES) as SearchFeature,
  );
  return {
    ...(uploadDate ? { uploadDate } : {}),
    ...(duration ? { duration } : {}),
    ...(sort && sort !== 'relevance' ? { sort } : {}),
    ...(features.length > 0 ? { features: features.sort() } : {}),
  };
}

function queryOf(query: string): string {
  const q = query.trim();
  if (q.length === 0 || q.length > SEARCH_QUERY_MAX)
    throw bad('q', `q must be 1 to ${SEARCH_QUERY_MAX} characters`);
  return q;
}

/** A cache key of bounded length whatever the query and token (both may be long). */
const keyOf = (kind: string, material: unknown) =>
  `${kind}:v1:${createHash('sha256').update(JSON.stringify(material)).digest('base64url')}`;

const big = (n: number | undefined) => (n === undefined ? undefined : BigInt(n));

function resultOf(r: SearchResult): extractorV1.SearchResult {
  return {
    kind: r.kind,
    id: r.id,
    title: r.title,
    channel: r.channel ?? '',
    channelId: r.channelId ?? '',
    durationSeconds: r.durationSeconds,
    publishedText: r.publishedText,
    viewCount: big(r.viewCount),
    thumbnail: r.thumbnail ?? '',
    isShort: r.isShort === true,
    isLive: r.isLive === true,
    isUpcoming: r.isUpcoming === true,
    videoCount: big(r.videoCount),
    handle: r.handle ?? '',
    subscriberCount: big(r.subscriberCount),
  };
}

export function createSearchService(deps: {
  youtube: YouTube;
  cache: JsonCache;
  ttlMs: number;
}): SearchService {
  const { youtube, cache, ttlMs } = deps;
  return {
    async search(req) {
      const query = queryOf(req.query);
      const type = TYPE_OF[req.type];
      if (type === undefined) throw bad('type', 'type must be video, channel, playlist or all');
      const filters = filtersOf(req.filters);
      const key = keyOf('search', { q: query, type, filters, c: req.continuation });
      const answer = (page: SearchPage, cached: boolean): extractorV1.SearchResponse => ({
        results: page.results.map(resultOf),
        correctedQuery: page.correctedQuery ?? '',
        nextContinuation: page.nextToken ?? '',
        cached,
      });
      if (req.cachedOnly) {
        const hit = await cache.get<SearchPage>(key);
        return hit ? answer(hit, true) : answer({ results: [] }, false);
      }
      const { value, cached } = await cache.getOrLoad<SearchPage>(key, ttlMs, () =>
        youtube.search({
          query,
          type,
          ...filters,
          ...(req.continuation ? { continuation: req.continuation } : {}),
        }),
      );
      return answer(value, cached);
    },

    async listSearchVideos(req, signal) {
      const query = queryOf(req.query);
      if (!Number.isInteger(req.maxVideos) || req.maxVideos < 1 || req.maxVideos > LISTING_MAX_VIDEOS)
        throw bad('max', `max_videos must be between 1 and ${LISTING_MAX_VIDEOS}`);
      const filters = filtersOf(req.filters);
      const key = keyOf('search-listing', { q: query, filters, max: req.maxVideos });
      const { value, cached } = await cache.getOrLoad<SearchVideos>(key, ttlMs, () =>
        youtube.searchVideos({ query, filters, max: req.maxVideos, ...(signal ? { signal } : {}) }),
      );
      return {
        videos: value.videos.map(resultOf),
        correctedQuery: value.correctedQuery ?? '',
        hasMore: value.hasMore,
        cached,
      };
    },
  };
}

import type { commentsV1 } from '@subx/contracts';
import type { JsonCache } from '@subx/ports';
import { isVideoId } from '@subx/youtube';
import type { Comment, YouTubeClient } from '@subx/youtube';
import { Errors } from '@subx/errors';

type YouTube = Pick<YouTubeClient, 'getComments'>;

export const MAX_COMMENTS = 2000;

interface CachedComments {
  comments: Comment[];
  commentsDisabled: boolean;
  totalCount: number;
  /** The fetch stopped because the platform had no more comments (not because of `max`). */
  complete: boolean;
}

export interface CommentsService {
  getComments(req: commentsV1.GetCommentsRequest): Promise<commentsV1.GetCommentsResponse>;
}

const SORTS = { 1: 'relevance', 2: 'time' } as const;

/**
 * Comment downloads with a 1 h cache per (video, sort). An entry fetched with a larger `max`
 * (or holding every comment the video has) serves any smaller request, so `cached` stays true
 * to the fact while a bigger request fetches again.
 */
export function createCommentsService(deps: {
  youtube: YouTube;
  cache: JsonCache;
  ttlMs: number;
}): CommentsService {
  const { youtube, cache, ttlMs } = deps;

  async function fetchFresh(
    videoId: string,
    sort: 'relevance' | 'time',
    max: number,
  ): Promise<CachedComments> {
    const r = await youtube.getComments({ videoId, max, sort });
    return {
      comments: r.comments,
      commentsDisabled: r.commentsDisabled,
      totalCount: r.totalCount,
      // a partial listing (the platform stopped answering pages) is never taken for the whole thread
      complete: r.commentsDisabled || (!r.partial && r.comments.length < max),
    };
  }

  // Concurrent identical cold requests share one download (100 sequential pages for 2000).
  const inflight = new Map<string, Promise<CachedComments>>();
  function loadShared(
    key: string,
    videoId: string,
    sort: 'relevance' | 'time',
    max: number,
  ): Promise<CachedComments> {
    const flightKey = `${key}:${max}`;
    let flight = inflight.get(flightKey);
    if (flight === undefined) {
      flight = fetchFresh(videoId, sort, max)
        .then(async (fresh) => {
          await cache.set(key, fresh, ttlMs);
          return fresh;
        })
        .finally(() => inflight.delete(flightKey));
      inflight.set(flightKey, flight);
    }
    return flight;
  }

  return {
    async getComments(req) {
      if (!isVideoId(req.videoId)) throw Errors.invalidUrl();
      const max = req.max === 0 ? 500 : req.max;
      if (!Number.isInteger(max) || max < 1 || max > MAX_COMMENTS) {
        throw Errors.invalidRequest(`max must be between 1 and ${MAX_COMMENTS}`);
      }
      const sort = SORTS[req.sort as 1 | 2] ?? 'relevance';
      const key = `comments:v1:${req.videoId}:${sort}`;

      let entry: CachedComments | null = req.forceRefresh ? null : await cache.get<CachedComments>(key);
      let cached = true;
      const sufficient = entry !== null && (entry.complete || entry.comments.length >= max);
      if (req.cachedOnly && !sufficient) {
        // a cache-only question never reaches the platform: a miss is an empty, uncached answer
        return { videoId: req.videoId, comments: [], commentsDisabled: false, totalCount: 0n, cached: false };
      }
      if (entry === null || !sufficient) {
        entry = await loadShared(key, req.videoId, sort, max);
        cached = false;
      }
      return {
        videoId: req.videoId,
        comments: entry.comments.slice(0, max).map((c) => ({
          id: c.id,
          author: c.author,
          text: c.text,
          likes: BigInt(c.likes),
          publishedAt: BigInt(c.publishedAt),
          isReply: c.isReply,
          parentId: c.parentId,
        })),
        commentsDisabled: entry.commentsDisabled,
        totalCount: BigInt(entry.totalCount),
        cached,
      };
    },
  };
}

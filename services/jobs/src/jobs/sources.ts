/**
 * A job's list of videos. URLs are known when the job is created; a playlist or a channel tab is
 * listed by the runner when the job starts (every continuation, up to the job's `max`), through
 * the extractor's listing RPCs, which read the platform's current page shapes; a search is its first
 * `max` videos in the platform's order.
 */
import { extractorV1 } from '@subx/contracts';
import { AppError, Errors } from '@subx/errors';
import { backoffDelay } from '@subx/ports';
import type { SearchDuration, SearchFeature, SearchSort, UploadDate } from '@subx/youtube';
import type { ExtractorBackend } from '@subx/backends';
import { playlistIdOf } from '@subx/public-api';
import type { JobDoc, JobItem } from './model.ts';
import type { ChannelTabName } from '@subx/public-api';
import { searchFiltersOf } from '@subx/public-api';

interface ListedSource {
  items: JobItem[];
  info: { title: string; id: string } | null;
}

export interface JobSourceLister {
  /** The job's items; rejects with an AppError (PLAYLIST_NOT_FOUND, CHANNEL_NOT_FOUND, ...). */
  list(job: JobDoc): Promise<ListedSource>;
}

/** A channel tab as the extractor's listing RPC names it (also the watches' listing). */
export const CHANNEL_TAB_OF: Record<ChannelTabName, extractorV1.ChannelTab> = {
  videos: extractorV1.ChannelTab.CHANNEL_TAB_VIDEOS,
  shorts: extractorV1.ChannelTab.CHANNEL_TAB_SHORTS,
  streams: extractorV1.ChannelTab.CHANNEL_TAB_STREAMS,
};

export const watchUrl = (videoId: string) => `https://www.youtube.com/watch?v=${videoId}`;

/** A search source's query and filters, as jobs and watches take and keep them. */
export interface SearchSource {
  query: string;
  upload_date?: UploadDate;
  duration?: SearchDuration;
  sort?: SearchSort;
  features?: SearchFeature[];
}

/**
 * A search source as a job or a watch keeps it: the query trimmed (only spaces: INVALID_REQUEST),
 * unset filters left out, each feature once and sorted, so equal searches are stored alike.
 */
export function normalizedSearch(given: SearchSource): SearchSource {
  const query = given.query.trim();
  if (query.length === 0)
    throw Errors.invalidRequest('source.query must not be only spaces', { field: 'source.query' });
  const { upload_date, duration, sort, features } = given;
  return {
    query,
    ...(upload_date ? { upload_date } : {}),
    ...(duration ? { duration } : {}),
    ...(sort ? { sort } : {}),
    ...(features && features.length > 0 ? { features: [...new Set(features)].sort() } : {}),
  };
}

/** Tries a listing that failed for a passing reason (timeouts, pacing) a few times before giving up. */
async function withRetries<T>(
  work: () => Promise<T>,
  attempts: number,
  sleep: (ms: number) => Promise<void>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof AppError) || !error.retryable || attempt >= attempts) throw error;
      await sleep(backoffDelay({ baseMs: 2_000, maxMs: 30_000 }, attempt));
    }
  }
}

export function createJobSourceLister(deps: {
  extractor: Pick<ExtractorBackend, 'listPlaylistVideos' | 'listChannelVideos' | 'listSearchVideos'>;
  timeoutMs: number;
  attempts?: number;
  sleep?: (ms: number) => Promise<void>;
}): JobSourceLister {
  const sleep =
    deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref()));
  const attempts = deps.attempts ?? 3;
  return {
    async list(job) {
      const source = job.source;
      const options = { deadlineMs: deps.timeoutMs, requestId: job.request_id };
      if (source.type === 'playlist') {
        const playlistId = playlistIdOf(source.url);
        const listed = await withRetries(
          () => deps.extractor.listPlaylistVideos({ playlistId, maxVideos: source.max }, options),
          attempts,
          sleep,
        );
        return {
          items: listed.videoIds.slice(0, source.max).map((id) => ({ url: watchUrl(id), video_id: id })),
          info: { title: listed.title, id: listed.playlistId },
        };
      }
      if (source.type === 'channel') {
        const listed = await withRetries(
          () =>
            deps.extractor.listChannelVideos(
              { url: source.url, tab: CHANNEL_TAB_OF[source.tab], maxVideos: source.max },
              options,
            ),
          attempts,
          sleep,
        );
        return {
          items: listed.videos
            .slice(0, source.max)
            .map((v) => ({ url: watchUrl(v.videoId), video_id: v.videoId })),
          info: { title: listed.title, id: listed.channelId },
        };
      }
      if (source.type === 'search') {
        const listed = await withRetries(
          () =>
            deps.extractor.listSearchVideos(
              {
                query: source.query,
                filters: searchFiltersOf(source),
                maxVideos: source.max,
              },
              options,
            ),
          attempts,
          sleep,
        );
        return {
          items: listed.videos.slice(0, source.max).map((v) => ({ url: watchUrl(v.id), video_id: v.id })),
          // The title a search job shows is the query the platform searched (its correction, if any).
          info: { title: listed.correctedQuery || source.query, id: source.query },
        };
      }
      // A URL list is stored with the job when it is created; a job without it cannot run.
      throw new AppError('INTERNAL_ERROR', `job ${job._id} has no stored items`);
    },
  };
}

import { extractorV1 } from '@subx/contracts';
import { Errors } from '@subx/errors';
import type { JsonCache } from '@subx/ports';
import {
  LISTING_MAX_VIDEOS,
  canonicalChannelUrl,
  parseChannelUrl,
  type ChannelListing,
  type ChannelTab,
  type PlaylistListing,
  type YouTubeClient,
} from '@subx/youtube';

/**
 * Long listings for bulk jobs: a whole playlist (ListPlaylistVideos) and a channel tab
 * (ListChannelVideos), up to 10,000 videos each, cached like playlists (PLAYLIST_CACHE_TTL_MS). The
 * public playlist route keeps GetPlaylist and its 25.
 */
export interface ListingService {
  listPlaylistVideos(
    req: extractorV1.ListPlaylistVideosRequest,
    signal?: AbortSignal,
  ): Promise<extractorV1.ListPlaylistVideosResponse>;
  listChannelVideos(
    req: extractorV1.ListChannelVideosRequest,
    signal?: AbortSignal,
  ): Promise<extractorV1.ListChannelVideosResponse>;
}

type YouTube = Pick<YouTubeClient, 'listPlaylist' | 'listChannel'>;

const PLAYLIST_ID = /^[A-Za-z0-9_-]{10,64}$/;

const TAB_OF: Partial<Record<extractorV1.ChannelTab, ChannelTab>> = {
  [extractorV1.ChannelTab.CHANNEL_TAB_VIDEOS]: 'videos',
  [extractorV1.ChannelTab.CHANNEL_TAB_SHORTS]: 'shorts',
  [extractorV1.ChannelTab.CHANNEL_TAB_STREAMS]: 'streams',
};
const PROTO_TAB: Record<ChannelTab, extractorV1.ChannelTab> = {
  videos: extractorV1.ChannelTab.CHANNEL_TAB_VIDEOS,
  shorts: extractorV1.ChannelTab.CHANNEL_TAB_SHORTS,
  streams: extractorV1.ChannelTab.CHANNEL_TAB_STREAMS,
};

/** max_videos as the listings take it: explicit (a job names its bound), 1..10,000. */
function maxOf(maxVideos: number): number {
  if (!Number.isInteger(maxVideos) || maxVideos < 1 || maxVideos > LISTING_MAX_VIDEOS)
    throw Errors.invalidRequest(`max_videos must be between 1 and ${LISTING_MAX_VIDEOS}`);
  return maxVideos;
}

export function createListingService(deps: {
  youtube: YouTube;
  cache: JsonCache;
  ttlMs: number;
}): ListingService {
  const { youtube, cache, ttlMs } = deps;
  return {
    async listPlaylistVideos(req, signal) {
      const max = maxOf(req.maxVideos);
      if (!PLAYLIST_ID.test(req.playlistId))
        throw Errors.invalidUrl('The URL is not an accepted playlist URL.');
      const { value, cached } = await cache.getOrLoad<PlaylistListing>(
        `playlist-listing:v1:${req.playlistId}:${max}`,
        ttlMs,
        () => youtube.listPlaylist(req.playlistId, { max, ...(signal ? { signal } : {}) }),
      );
      return {
        playlistId: value.playlistId,
        title: value.title,
        uploader: value.uploader,
        totalVideos: value.totalVideos,
        videoIds: value.videoIds,
        hasMore: value.hasMore,
        cached,
      };
    },

    async listChannelVideos(req, signal) {
      const max = maxOf(req.maxVideos);
      const parsed = parseChannelUrl(req.url);
      if (!parsed) throw Errors.invalidUrl('The URL is not an accepted channel URL.');
      const askedTab = TAB_OF[req.tab];
      if (askedTab === undefined && req.tab !== extractorV1.ChannelTab.CHANNEL_TAB_UNSPECIFIED)
        throw Errors.invalidRequest('tab must be videos, shorts or streams');
      const tab = askedTab ?? parsed.tab ?? 'videos';
      // keyed by the channel's canonical URL, so www./m., a trailing tab path or a query share one entry
      const key = `channel-listing:v1:${canonicalChannelUrl(parsed.ref)}:${tab}:${max}`;
      const { value, cached } = await cache.getOrLoad<ChannelListing>(key, ttlMs, () =>
        youtube.listChannel({ url: req.url, tab, max, ...(signal ? { signal } : {}) }),
      );
      return {
        channelId: value.channelId,
        title: value.title,
        handle: value.handle,
        tab: PROTO_TAB[value.tab],
        videos: value.videos.map((v) => ({
          videoId: v.videoId,
          title: v.title,
          durationSeconds: v.durationSeconds,
          publishedText: v.publishedText,
          viewCount: v.viewCount === undefined ? undefined : BigInt(v.viewCount),
          isLive: v.isLive === true,
          isUpcoming: v.isUpcoming === true,
        })),
        hasMore: value.hasMore,
        cached,
      };
    },
  };
}

/** Long listings (src/listing, src/channel): a playlist past its first page, a channel's tabs. */
import { listChannelTab, type ChannelListing, type ChannelListingRequest } from '../channel/list.ts';
import type { ListingOptions } from '../listing/collect.ts';
import type { InnertubeCalls } from '../listing/innertube.ts';
import { listPlaylist, type PlaylistListing } from '../listing/playlist.ts';
import type { YouTubeOperations } from './context.ts';

/** A playlist past its first page, every continuation up to `max` (bounded; for bulk jobs). */
export function listPlaylistVideos(
  yt: YouTubeOperations,
  playlistId: string,
  listing: ListingOptions,
): Promise<PlaylistListing> {
  return listPlaylist(innertubeCalls(yt), playlistId, listing);
}

/** A channel's videos, Shorts or live tab from its URL, continuations up to `max` (bounded). */
export function listChannelVideos(
  yt: YouTubeOperations,
  req: ChannelListingRequest,
): Promise<ChannelListing> {
  return listChannelTab(innertubeCalls(yt), req);
}

/** /browse and resolve_url as the WEB client, on one session for the whole listing. */
function innertubeCalls(yt: YouTubeOperations): InnertubeCalls {
  const lease = yt.innertube.lease();
  const web = yt.innertube.config.webClient;
  return {
    browse: (body) => yt.innertube.post('browse', web, body, { lease }),
    resolveUrl: (url) => yt.innertube.post('resolve_url', web, { url }, { lease }),
    logger: yt.logger,
  };
}

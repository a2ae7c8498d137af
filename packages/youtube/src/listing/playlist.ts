import { Errors, plural } from '@subx/errors';
import { parsePlaylistPage, type PlaylistPage } from '../parse/playlist.ts';
import { playlistContinuation } from '../tokens.ts';
import { collectPages, listingMax, type ListingOptions } from './collect.ts';
import type { InnertubeCalls } from './innertube.ts';

/** A playlist listed past its first page, for bulk jobs (the public playlist route keeps `getPlaylist`, ≤ 25). */
export interface PlaylistListing {
  playlistId: string;
  title: string;
  uploader: string;
  /** What the playlist header says it holds (hidden unavailable videos included). */
  totalVideos: number;
  /** In playlist order, at most `max`. */
  videoIds: string[];
  /** The playlist goes on past `videoIds`. */
  hasMore: boolean;
}

/**
 * The same reading as `YouTubeClient.getPlaylist` (classic, flat and header-only first pages; a header-only
 * one is continued with the continuation built from the id), bounded by `collectPages`: up to 10,000 ids,
 * 400 pages, a deadline and the caller's signal.
 */
export async function listPlaylist(
  calls: InnertubeCalls,
  playlistId: string,
  listing: ListingOptions,
): Promise<PlaylistListing> {
  const max = listingMax(listing.max);
  const first = parsePlaylistPage(await calls.browse({ browseId: `VL${playlistId}` }));
  const headerOnly = first.videoIds.length === 0 && !first.nextToken;
  if (first.error || (headerOnly && first.title === undefined && first.totalVideos === undefined))
    throw Errors.playlistNotFound(playlistId);
  let nextToken = first.nextToken;
  if (headerOnly && first.totalVideos !== 0) {
    calls.logger?.debug({ playlistId }, 'header-only first playlist page; building the first continuation');
    nextToken = playlistContinuation(playlistId);
  }
  const asPage = (p: PlaylistPage) => ({
    items: p.videoIds,
    ...(p.nextToken ? { nextToken: p.nextToken } : {}),
  });
  const collected = await collectPages({
    first: { items: first.videoIds, ...(nextToken ? { nextToken } : {}) },
    fetchPage: async (token) => asPage(parsePlaylistPage(await calls.browse({ continuation: token }))),
    listing: { ...listing, max },
    what: `playlist ${playlistId}`,
    logger: calls.logger,
  });
  if (collected.items.length === 0 && first.totalVideos !== 0) {
    throw Errors.upstreamError(
      `The platform listed no videos for playlist ${playlistId}, which reports ` +
        `${typeof first.totalVideos === 'number' ? plural(first.totalVideos, 'video') : 'an unknown number of videos'}; retry later.`,
    );
  }
  return {
    playlistId,
    title: first.title ?? '',
    uploader: first.uploader ?? '',
    totalVideos: first.totalVideos ?? collected.items.length,
    videoIds: collected.items,
    hasMore: collected.hasMore,
  };
}

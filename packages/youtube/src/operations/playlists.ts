/** Playlists: the video ids of a playlist, page by page. */
import { Errors, plural } from '@subx/errors';
import { parsePlaylistPage } from '../parse/playlist.ts';
import { playlistContinuation } from '../tokens.ts';
import type { Playlist } from '../types.ts';
import type { YouTubeOperations } from './context.ts';

/**
 * First /browse page, then continuations. The first page comes in three shapes: classic (items in a
 * playlistVideoListRenderer), flat (lockupViewModel items straight in an itemSectionRenderer) and
 * header-only, which is continued with the first continuation built from the playlist id.
 */
export async function getPlaylist(yt: YouTubeOperations, playlistId: string, max: number): Promise<Playlist> {
  const web = yt.innertube.config.webClient;
  const lease = yt.innertube.lease();
  const browse = (body: Record<string, unknown>) =>
    yt.innertube.post('browse', web, body, { lease }).then(parsePlaylistPage);
  const first = await browse({ browseId: `VL${playlistId}` });
  const headerOnly = first.videoIds.length === 0 && !first.nextToken;
  if (first.error || (headerOnly && first.title === undefined && first.totalVideos === undefined)) {
    throw Errors.playlistNotFound(playlistId);
  }
  const ids = [...first.videoIds];
  const seenTokens = new Set<string>();
  let token = first.nextToken;
  if (headerOnly && first.totalVideos !== 0) {
    yt.logger?.debug({ playlistId }, 'header-only first playlist page; building the first continuation');
    token = playlistContinuation(playlistId);
  }
  while (ids.length < max && token && !seenTokens.has(token)) {
    seenTokens.add(token);
    const page = await browse({ continuation: token });
    if (page.videoIds.length === 0) break;
    ids.push(...page.videoIds);
    token = page.nextToken;
  }
  if (ids.length === 0 && first.totalVideos !== 0 && max > 0) {
    throw Errors.upstreamError(
      `The platform listed no videos for playlist ${playlistId}, which reports ` +
        `${typeof first.totalVideos === 'number' ? plural(first.totalVideos, 'video') : 'an unknown number of videos'}; retry later.`,
    );
  }
  return {
    playlistId,
    title: first.title ?? '',
    uploader: first.uploader ?? '',
    totalVideos: first.totalVideos ?? ids.length,
    videoIds: ids.slice(0, Math.max(0, max)),
  };
}

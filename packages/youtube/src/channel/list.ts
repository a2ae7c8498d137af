import { AppError, Errors } from '@subx/errors';
import { collectPages, listingMax, type ListingOptions } from '../listing/collect.ts';
import type { InnertubeCalls } from '../listing/innertube.ts';
import { listPlaylist } from '../listing/playlist.ts';
import { UpstreamHttpError } from '../transport.ts';
import {
  TAB_PARAMS,
  parseChannelContinuation,
  parseChannelPage,
  parseResolveUrl,
  type ChannelPage,
  type ListedVideo,
} from './parse.ts';
import { canonicalChannelUrl, parseChannelUrl, type ChannelRef, type ChannelTab } from './url.ts';

/** A channel tab listed for a bulk job. */
export interface ChannelListing {
  channelId: string;
  title: string;
  /** Without the '@'; '' when the channel has none. */
  handle: string;
  tab: ChannelTab;
  /** Newest first, as the tab shows them, at most `max`. */
  videos: ListedVideo[];
  /** The tab goes on past `videos`. */
  hasMore: boolean;
}

export interface ChannelListingRequest extends ListingOptions {
  url: string;
  /** Which tab; default: the one the URL names, else `videos`. */
  tab?: ChannelTab;
}

/** Hops of `WEB_PAGE_TYPE_UNKNOWN` URLs or channel redirects followed, as NewPipe does (then: not found). */
const MAX_REDIRECTS = 3;

const notFound = (what: string, why: string, reason?: string) => Errors.channelNotFound(what, why, reason);

/** The platform's 4xx about the channel itself: 404 (resolve_url of an unknown handle), 400 (a bad id). */
function isAboutTheChannel(err: unknown): boolean {
  if (!(err instanceof AppError) || err.code !== 'UPSTREAM_ERROR') return false;
  const http = err.cause;
  return (
    http instanceof UpstreamHttpError &&
    (http.status === 404 || (http.status === 400 && http.apiStatus === 'INVALID_ARGUMENT'))
  );
}

/**
 * The UC… id of a channel URL: read from `/channel/UC…` URLs, otherwise asked of `navigation/resolve_url`
 * (with the URL rebuilt from its parts), following vanity redirects up to three hops. A URL the platform
 * does not know, or that names something else than a channel, is CHANNEL_NOT_FOUND.
 */
export async function resolveChannelId(calls: InnertubeCalls, ref: ChannelRef): Promise<string> {
  if (ref.kind === 'id') return ref.channelId;
  let url = canonicalChannelUrl(ref);
  const label = url.replace('https://www.youtube.com/', '');
  for (let hop = 0; hop < MAX_REDIRECTS; hop++) {
    let answer: unknown;
    try {
      answer = await calls.resolveUrl(url);
    } catch (err) {
      if (isAboutTheChannel(err)) throw notFound(label, 'the platform knows no channel at this URL');
      throw err;
    }
    const resolved = parseResolveUrl(answer);
    if (resolved.channelId) return resolved.channelId;
    const next = resolved.followUrl ? URL.parse(resolved.followUrl, 'https://www.youtube.com/') : null;
    // only platform pages are followed, and only by path (the host is always ours to choose)
    if (!next || !/(^|\.)youtube\.com$/i.test(next.hostname)) break;
    url = `https://www.youtube.com${next.pathname}`;
  }
  throw notFound(label, 'the URL does not lead to a channel');
}

/** Unavailable channels as the platform words them: terminated / removed accounts, or none at all. */
function unavailable(channelId: string, message: string): AppError {
  const reason = /terminated|removed|suspended|violat/i.test(message) ? 'terminated' : 'not_found';
  return notFound(channelId, message, reason);
}

/**
 * The uploads playlists of a channel, by tab: what NewPipeExtractor reads for an age-restricted channel,
 * whose tabs are gated without signing in while these playlists are not. `UU` + the id's suffix is
 * every upload; `UULF` the videos tab (long form), `UUSH` Shorts, `UULV` live streams.
 */
const UPLOADS_PREFIX: Record<ChannelTab, string> = { videos: 'UULF', shorts: 'UUSH', streams: 'UULV' };

function uploadsPlaylistId(channelId: string, tab: ChannelTab): string {
  return `${UPLOADS_PREFIX[tab]}${channelId.slice(2)}`;
}

/**
 * An age-gated channel's tab, listed through its uploads playlist, in the playlist's order (newest
 * first, as the tab) with every continuation. A channel whose playlist cannot be read either stays
 * CHANNEL_NOT_FOUND reason age_restricted (also where the channel has no uploads of that kind: the
 * platform serves no such playlist, and a gated channel cannot tell us more).
 */
async function listAgeGatedTab(
  calls: InnertubeCalls,
  o: { channelId: string; title: string; tab: ChannelTab; req: ChannelListingRequest; max: number },
): Promise<ChannelListing> {
  const playlistId = uploadsPlaylistId(o.channelId, o.tab);
  calls.logger?.debug(
    { channelId: o.channelId, playlistId },
    'age-gated channel: listing its uploads playlist',
  );
  let listed;
  try {
    listed = await listPlaylist(calls, playlistId, { ...o.req, max: o.max });
  } catch (err) {
    if (err instanceof AppError && err.code === 'PLAYLIST_NOT_FOUND')
      throw notFound(
        o.channelId,
        'the channel is age-restricted and its uploads cannot be listed',
        'age_restricted',
      );
    throw err;
  }
  return {
    channelId: o.channelId,
    title: o.title || listed.uploader,
    handle: '',
    tab: o.tab,
    videos: listed.videoIds.map((videoId) => ({ videoId, title: '' })),
    hasMore: listed.hasMore,
  };
}

/**
 * One tab of a channel: its first `/browse` page (with the tab's params), then its continuations up to
 * `max` (bounded by `collectPages`). A channel without that tab lists nothing (the platform selects
 * another tab then); an unavailable channel is CHANNEL_NOT_FOUND with `reason` terminated or not_found.
 * An age-gated channel is listed through its uploads playlist (`listAgeGatedTab`).
 */
export async function listChannelTab(
  calls: InnertubeCalls,
  req: ChannelListingRequest,
): Promise<ChannelListing> {
  const parsed = parseChannelUrl(req.url);
  if (!parsed) throw Errors.invalidUrl('The URL is not an accepted channel URL.');
  const max = listingMax(req.max);
  const tab = req.tab ?? parsed.tab ?? 'videos';
  let channelId = await resolveChannelId(calls, parsed.ref);
  let first: ChannelPage;
  for (let hop = 0; ; hop++) {
    let answer: unknown;
    try {
      answer = await calls.browse({ browseId: channelId, params: TAB_PARAMS[tab] });
    } catch (err) {
      if (isAboutTheChannel(err))
        throw notFound(channelId, 'the platform refused the channel id', 'not_found');
      throw err;
    }
    first = parseChannelPage(answer);
    if (first.error) throw unavailable(channelId, first.error);
    if (first.ageGated) return listAgeGatedTab(calls, { channelId, title: first.title ?? '', tab, req, max });
    if (!first.redirectTo) break;
    if (hop >= MAX_REDIRECTS) throw notFound(channelId, 'the channel redirects too many times');
    calls.logger?.debug({ from: channelId, to: first.redirectTo }, 'channel redirects to another id');
    channelId = first.redirectTo;
  }
  if (first.channelId === undefined && first.title === undefined && first.selectedTab === undefined)
    throw Errors.upstreamError(
      `The platform answered channel ${channelId} with a page we do not understand.`,
    );
  const base = {
    channelId: first.channelId ?? channelId,
    title: first.title ?? '',
    handle: first.handle ?? '',
    tab,
  };
  // without a Shorts (or live) tab the platform answers its home tab: the channel has none of these
  if (first.selectedTab !== undefined && first.selectedTab !== tab)
    return { ...base, videos: [], hasMore: false };
  const collected = await collectPages<ListedVideo>({
    first: { items: first.videos, ...(first.nextToken ? { nextToken: first.nextToken } : {}) },
    fetchPage: async (token) => {
      const p = parseChannelContinuation(await calls.browse({ continuation: token }));
      return { items: p.videos, ...(p.nextToken ? { nextToken: p.nextToken } : {}) };
    },
    listing: { ...req, max },
    what: `the ${tab} of channel ${base.channelId}`,
    keyOf: (v) => v.videoId,
    logger: calls.logger,
  });
  return { ...base, videos: collected.items, hasMore: collected.hasMore };
}

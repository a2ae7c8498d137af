import { clockSeconds } from '../channel/parse.ts';
import { parseCount } from '../parse/counts.ts';
import { arr, at, continuationToken, findAll, findFirst, isObj, str, text } from '../parse/json.ts';

/**
 * Pure functions over InnerTube `search` answers (recorded 2026 shapes in
 * fixtures-recorded/newpipe/43f8e6e/search): a first page (`contents.twoColumnSearchResultsRenderer`
 * → section list → item sections, then a `continuationItemRenderer`) and a continuation
 * (`onResponseReceivedCommands[].appendContinuationItemsAction.continuationItems`, the same items).
 *
 * Results are the items of the item sections, in the platform's order, as NewPipeExtractor's
 * `YoutubeSearchExtractor` collects them: videos (`videoRenderer`, 2025+ `lockupViewModel`, a bare
 * Shorts lockup), channels (`channelRenderer`) and playlists (`playlistRenderer`, `lockupViewModel`).
 * Shelves inside a section ("Shorts", "People also watched", "Popular in <city>", "Channels new to
 * you") are the platform's suggestions, not results of the query, and are left out. Nothing here throws
 * on a missing node.
 */

export type SearchResultKind = 'video' | 'channel' | 'playlist';

/** One result, with what the page carries about it (fields absent when the page says nothing). */
export interface SearchResult {
  kind: SearchResultKind;
  /** The video, channel or playlist id. */
  id: string;
  title: string;
  /** The channel's name (for a channel result, its own; for a video of collaborators, the first). */
  channel?: string;
  channelId?: string;
  /** From the length label ("2:16"); absent for live streams and upcoming ones. */
  durationSeconds?: number;
  /** As the page words it: "2 hours ago", "Streamed 3 days ago", "Updated yesterday". */
  publishedText?: string;
  /** Parsed from "1,862 views" (absent for a live stream's "1,071 watching"). */
  viewCount?: number;
  /** The largest thumbnail, with a scheme. */
  thumbnail?: string;
  /** A Short (opened in the Shorts player). */
  isShort?: boolean;
  /** Live right now. */
  isLive?: boolean;
  /** A scheduled stream or premiere that has not started. */
  isUpcoming?: boolean;
  /** Playlists: how many videos the playlist holds. */
  videoCount?: number;
  /** Channels: the handle without '@'. */
  handle?: string;
  /** Channels: subscribers as the page counts them ("234k subscribers" → 234000). */
  subscriberCount?: number;
}

export interface SearchPage {
  results: SearchResult[];
  /**
   * The query the platform searched or suggests instead of the one asked: "Showing results for",
   * "Including results for" (the results are the corrected query's) or "Did you mean".
   */
  correctedQuery?: string;
  /** The platform's continuation token for the next page. */
  nextToken?: string;
}

/** An absolute https URL ("//yt3.ggpht.com/…" → "https://yt3.ggpht.com/…"). */
function absolute(url: string | undefined): string | undefined {
  if (!url) return undefined;
  return url.startsWith('//') ? `https:${url}` : url;
}

/** The widest of `[{url, width}]` (the platform lists them small to large, but not always). */
function widest(list: unknown): string | undefined {
  let best: { url: string; width: number } | undefined;
  for (const t of arr(list)) {
    const url = str(at(t, 'url'));
    if (!url) continue;
    const width = typeof at(t, 'width') === 'number' ? (at(t, 'width') as number) : 0;
    if (!best || width >= best.width) best = { url, width };
  }
  return absolute(best?.url);
}

/** The channel a byline names: its text and browse id, or the first collaborator of a shared video. */
function byline(r: Record<string, unknown>): { channel?: string; channelId?: string } {
  const line = r.ownerText ?? r.longBylineText ?? r.shortBylineText;
  const run = at(line, 'runs', 0);
  const dialog = findFirst(at(run, 'navigationEndpoint', 'showDialogCommand'), 'listItems');
  if (Array.isArray(dialog) && dialog.length > 0) {
    // "A and B": the collaborators' dialog lists each with its own channel link
    const first = at(dialog[0], 'listItemViewModel');
    const name = text(at(first, 'title'))?.trim();
    const id = str(at(findFirst(first, 'browseEndpoint'), 'browseId'));
    return { ...(name ? { channel: name } : {}), ...(id ? { channelId: id } : {}) };
  }
  const channel = text(line)?.trim();
  const channelId = str(at(run, 'navigationEndpoint', 'browseEndpoint', 'browseId'));
  return { ...(channel ? { channel } : {}), ...(channelId ? { channelId } : {}) };
}

function badgeStyles(r: Record<string, unknown>): string[] {
  return arr(r.badges)
    .map((b) => str(at(b, 'metadataBadgeRenderer', 'style')))
    .filter((s): s is string => !!s);
}

function overlayStyles(r: Record<string, unknown>): string[] {
  return arr(r.thumbnailOverlays)
    .map((o) => str(at(o, 'thumbnailOverlayTimeStatusRenderer', 'style')))
    .filter((s): s is string => !!s);
}

/** "1,862 views" → 1862, "No views" → 0; a live stream's "1,071 watching" is no view count. */
function views(label: string | undefined): number | undefined {
  if (!label || !/\bviews?\b/i.test(label)) return undefined;
  return parseCount(label);
}

function fromVideoRenderer(r: Record<string, unknown>): SearchResult | undefined {
  const id = str(r.videoId);
  if (!id) return undefined;
  const overlays = overlayStyles(r);
  const viewText = text(r.viewCountText);
  const isShort = isObj(at(r, 'navigationEndpoint', 'reelWatchEndpoint')) || overlays.includes('SHORTS');
  const isLive =
    badgeStyles(r).includes('BADGE_STYLE_TYPE_LIVE_NOW') ||
    overlays.includes('LIVE') ||
    /\bwatching\b/i.test(viewText ?? '');
  const isUpcoming = isObj(r.upcomingEventData) || overlays.includes('UPCOMING');
  const duration = isLive || isUpcoming ? undefined : clockSeconds(text(r.lengthText));
  const published = text(r.publishedTimeText);
  const viewCount = views(viewText);
  const thumbnail = widest(at(r, 'thumbnail', 'thumbnails'));
  return {
    kind: 'video',
    id,
    title: text(r.title) ?? text(r.headline) ?? '',
    ...byline(r),
    ...(duration !== undefined ? { durationSeconds: duration } : {}),
    ...(published ? { publishedText: published } : {}),
    ...(viewCount !== undefined ? { viewCount } : {}),
    ...(thumbnail ? { thumbnail } : {}),
    ...(isShort ? { isShort } : {}),
    ...(isLive ? { isLive } : {}),
    ...(isUpcoming ? { isUpcoming } : {}),
  };
}

function fromChannelRenderer(r: Record<string, unknown>): SearchResult | undefined {
  const id = str(r.channelId);
  if (!id) return undefined;
  const title = text(r.title) ?? '';
  const base = str(at(r, 'navigationEndpoint', 'browseEndpoint', 'canonicalBaseUrl'));
  // since 2024 `subscriberCountText` holds the handle and `videoCountText` the subscribers
  const labels = [text(r.subscriberCountText), text(r.videoCountText)].filter((t): t is string => !!t);
  const handle =
    (base?.startsWith('/@') ? decodeURIComponent(base.slice(2)) : undefined) ??
    labels.find((t) => t.startsWith('@'))?.slice(1);
  const subscribers = labels.find((t) => /subscriber/i.test(t));
  const subscriberCount = subscribers ? parseCount(subscribers) : undefined;
  const thumbnail = widest(at(r, 'thumbnail', 'thumbnails'));
  return {
    kind: 'channel',
    id,
    title,
    channel: title,
    channelId: id,
    ...(thumbnail ? { thumbnail } : {}),
    ...(handle ? { handle } : {}),
    ...(subscriberCount !== undefined ? { subscriberCount } : {}),
  };
}

function fromPlaylistRenderer(r: Record<string, unknown>): SearchResult | undefined {
  const id = str(r.playlistId);
  if (!id) return undefined;
  const count = parseCount(str(r.videoCount) ?? text(r.videoCountText));
  const thumbnail = widest(at(r, 'thumbnails', 0, 'thumbnails')) ?? widest(at(r, 'thumbnail', 'thumbnails'));
  return {
    kind: 'playlist',
    id,
    title: text(r.title) ?? '',
    ...byline(r),
    ...(thumbnail ? { thumbnail } : {}),
    ...(count !== undefined ? { videoCount: count } : {}),
  };
}

const LOCKUP_KINDS: Record<string, SearchResultKind> = {
  LOCKUP_CONTENT_TYPE_VIDEO: 'video',
  LOCKUP_CONTENT_TYPE_PLAYLIST: 'playlist',
  LOCKUP_CONTENT_TYPE_PODCAST: 'playlist',
  LOCKUP_CONTENT_TYPE_ALBUM: 'playlist',
};

/** The 2025-2026 `lockupViewModel`: a video, or a playlist (mixes and podcasts are playlists too). */
function fromLockup(l: Record<string, unknown>): SearchResult | undefined {
  const kind = LOCKUP_KINDS[str(l.contentType) ?? ''];
  const id = str(l.contentId);
  if (!kind || !id) return undefined;
  const meta = at(l, 'metadata', 'lockupMetadataViewModel');
  const parts: { text: string; channelId?: string }[] = [];
  for (const row of arr(at(meta, 'metadata', 'contentMetadataViewModel', 'metadataRows')))
    for (const part of arr(at(row, 'metadataParts'))) {
      const t = text(at(part, 'text'));
      if (!t) continue;
      const browse = at(part, 'text', 'commandRuns', 0, 'onTap', 'innertubeCommand', 'browseEndpoint');
      const channelId = str(at(browse, 'browseId'));
      parts.push({ text: t, ...(channelId?.startsWith('UC') ? { channelId } : {}) });
    }
  const owner = parts.find((p) => p.channelId);
  const image = at(l, 'contentImage');
  const sources =
    at(image, 'collectionThumbnailViewModel', 'primaryThumbnail', 'thumbnailViewModel', 'image', 'sources') ??
    at(image, 'thumbnailViewModel', 'image', 'sources');
  const thumbnail = widest(sources);
  const badges = findAll(image, 'thumbnailBadgeViewModel').map((b) => ({
    text: str(at(b, 'text')),
    style: str(at(b, 'badgeStyle')) ?? '',
  }));
  const out: SearchResult = {
    kind,
    id,
    title: text(at(meta, 'title')) ?? '',
    ...(owner ? { channel: owner.text, channelId: owner.channelId } : {}),
    ...(thumbnail ? { thumbnail } : {}),
  };
  if (kind === 'playlist') {
    const count = badges.map((b) => b.text).find((t) => t && /\bvideos?\b|\bepisodes?\b/i.test(t));
    const n = count ? parseCount(count) : undefined;
    if (n !== undefined) out.videoCount = n;
    const updated = parts.find((p) => /^updated\b/i.test(p.text));
    if (updated) out.publishedText = updated.text;
    return out;
  }
  for (const b of badges) {
    const seconds = clockSeconds(b.text);
    if (seconds !== undefined) out.durationSeconds ??= seconds;
    else if (b.style.endsWith('_LIVE') || b.text === 'LIVE') out.isLive = true;
    else if (b.text === 'SHORTS') out.isShort = true;
    else if (b.text && /\b(upcoming|premiere)/i.test(b.text)) out.isUpcoming = true;
  }
  const viewCount = views(parts.find((p) => /\bviews?\b/i.test(p.text))?.text);
  if (viewCount !== undefined) out.viewCount = viewCount;
  const published = parts.find((p) => /\b(ago|streamed|premiered|scheduled)\b/i.test(p.text));
  if (published) out.publishedText = published.text;
  return out;
}

/** A Short on its own (not inside a shelf): the id from the reel endpoint, title and views from the overlay. */
function fromShortsLockup(l: Record<string, unknown>): SearchResult | undefined {
  const reel = findFirst(l.onTap, 'reelWatchEndpoint');
  const id = str(at(reel, 'videoId')) ?? str(l.entityId)?.replace(/^shorts-shelf-item-/, '');
  if (!id) return undefined;
  const viewCount = views(text(at(l, 'overlayMetadata', 'secondaryText')));
  const thumbnail = widest(at(l, 'thumbnail', 'sources'));
  return {
    kind: 'video',
    id,
    title: text(at(l, 'overlayMetadata', 'primaryText')) ?? '',
    ...(viewCount !== undefined ? { viewCount } : {}),
    ...(thumbnail ? { thumbnail } : {}),
    isShort: true,
  };
}

/** A result of one item of an item section, or undefined (shelves, messages, panels, ads). */
export function searchItem(item: unknown): SearchResult | undefined {
  if (!isObj(item)) return undefined;
  if (isObj(item.videoRenderer)) return fromVideoRenderer(item.videoRenderer);
  if (isObj(item.channelRenderer)) return fromChannelRenderer(item.channelRenderer);
  if (isObj(item.playlistRenderer)) return fromPlaylistRenderer(item.playlistRenderer);
  if (isObj(item.lockupViewModel)) return fromLockup(item.lockupViewModel);
  if (isObj(item.shortsLockupViewModel)) return fromShortsLockup(item.shortsLockupViewModel);
  if (isObj(item.reelItemRenderer)) {
    const v = fromVideoRenderer(item.reelItemRenderer);
    return v ? { ...v, isShort: true } : undefined;
  }
  return undefined;
}

/** The corrected query of a correction renderer: its search endpoint's query, else its words. */
function correctionOf(item: unknown): string | undefined {
  const r =
    at(item, 'showingResultsForRenderer') ??
    at(item, 'includingResultsForRenderer') ??
    at(item, 'didYouMeanRenderer');
  if (!isObj(r)) return undefined;
  const q = str(at(r, 'correctedQueryEndpoint', 'searchEndpoint', 'query')) ?? text(r.correctedQuery);
  return q?.trim() || undefined;
}

/** The section list's items: item sections (their contents) and the continuation item, in order. */
function readSections(sections: unknown[]): SearchPage {
  const results: SearchResult[] = [];
  let correctedQuery: string | undefined;
  let nextToken: string | undefined;
  for (const section of sections) {
    const cont = at(section, 'continuationItemRenderer');
    if (isObj(cont)) {
      nextToken = continuationToken(cont) ?? nextToken;
      continue;
    }
    for (const item of arr(at(section, 'itemSectionRenderer', 'contents'))) {
      correctedQuery ??= correctionOf(item);
      const r = searchItem(item);
      if (r) results.push(r);
    }
  }
  return { results, ...(correctedQuery ? { correctedQuery } : {}), ...(nextToken ? { nextToken } : {}) };
}

/** A first page (`contents`) or a continuation (`onResponseReceivedCommands`) of a search. */
export function parseSearchPage(answer: unknown): SearchPage {
  const primary = at(answer, 'contents', 'twoColumnSearchResultsRenderer', 'primaryContents');
  const list = at(primary ?? at(answer, 'contents'), 'sectionListRenderer', 'contents');
  if (Array.isArray(list)) return readSections(list);
  const items: unknown[] = [];
  for (const cmd of [
    ...arr(at(answer, 'onResponseReceivedCommands')),
    ...arr(at(answer, 'onResponseReceivedActions')),
  ]) {
    const action = at(cmd, 'appendContinuationItemsAction') ?? at(cmd, 'reloadContinuationItemsCommand');
    items.push(...arr(at(action, 'continuationItems')));
  }
  return readSections(items);
}

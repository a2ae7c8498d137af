import { parseCount } from '../parse/counts.ts';
import { arr, at, continuationToken, findAll, isObj, str, text } from '../parse/json.ts';
import type { ChannelTab } from './url.ts';

/**
 * Pure functions over the channel answers of InnerTube (recorded 2026 shapes in
 * fixtures-recorded/newpipe/43f8e6e/youtubechannel*): `navigation/resolve_url`, a tab's first `/browse`
 * page and its continuations. Nothing here throws on a missing node; the caller decides what an
 * absent field means.
 */

/** One video of a listing, with what the page carries about it (fields absent when the page says nothing). */
export interface ListedVideo {
  videoId: string;
  title: string;
  /** From the thumbnail badge ("1:07:34"); absent for Shorts, live and upcoming streams. */
  durationSeconds?: number;
  /** As the page words it: "13 days ago", "Streamed 5 years ago". */
  publishedText?: string;
  /** As the page words it: "28 views", "895k views". */
  viewCountText?: string;
  /** Parsed from `viewCountText` (approximate when the page abbreviates it). */
  viewCount?: number;
  /** Live right now (LIVE badge). */
  isLive?: boolean;
  /** A scheduled stream or premiere that has not started. */
  isUpcoming?: boolean;
}

export interface ResolvedUrl {
  /** The UC… id when the URL names a channel. */
  channelId?: string;
  /** WEB_PAGE_TYPE_CHANNEL, WEB_PAGE_TYPE_BROWSE, WEB_PAGE_TYPE_UNKNOWN, ... */
  pageType?: string;
  /** An unknown page type that points elsewhere (a vanity URL redirecting): resolve this one next. */
  followUrl?: string;
}

export interface ChannelPage {
  /** The platform's alert of an unavailable channel ("This channel does not exist.", terminated, removed). */
  error?: string;
  /** The platform redirected this id to another channel (navigateAction): browse that one instead. */
  redirectTo?: string;
  /** An age gate instead of the channel's content. */
  ageGated?: boolean;
  channelId?: string;
  title?: string;
  /** Without the '@'. */
  handle?: string;
  /** The tab the platform selected (by its URL's last segment: videos, shorts, streams, featured, ...). */
  selectedTab?: string;
  videos: ListedVideo[];
  nextToken?: string;
}

const CHANNEL_PAGE_TYPES = new Set(['WEB_PAGE_TYPE_CHANNEL', 'WEB_PAGE_TYPE_BROWSE']);

export function parseResolveUrl(answer: unknown): ResolvedUrl {
  const endpoint = at(answer, 'endpoint');
  const pageType = str(at(endpoint, 'commandMetadata', 'webCommandMetadata', 'webPageType'));
  const browseId = str(at(endpoint, 'browseEndpoint', 'browseId'));
  const followUrl = str(at(endpoint, 'urlEndpoint', 'url'));
  return {
    ...(pageType ? { pageType } : {}),
    ...(browseId && pageType && CHANNEL_PAGE_TYPES.has(pageType) && browseId.startsWith('UC')
      ? { channelId: browseId }
      : {}),
    ...(pageType === 'WEB_PAGE_TYPE_UNKNOWN' && followUrl ? { followUrl } : {}),
  };
}

/** "1:07:34" → 4054, "0:59" → 59; anything else (LIVE, SHORTS, UPCOMING) → undefined. */
export function clockSeconds(s: string | undefined): number | undefined {
  if (!s || !/^\d{1,3}(:\d{2}){1,2}$/.test(s.trim())) return undefined;
  return s
    .trim()
    .split(':')
    .reduce((acc, part) => acc * 60 + Number(part), 0);
}

const VIEWS = /\b(views?|watching|waiting)\b/i;
const PUBLISHED = /\b(ago|streamed|premiered|premieres|scheduled)\b/i;
const UPCOMING = /\b(scheduled|premieres|waiting|upcoming)\b/i;

function withCounts(v: ListedVideo, parts: string[]): ListedVideo {
  const views = parts.find((p) => VIEWS.test(p));
  const published = parts.find((p) => PUBLISHED.test(p));
  if (views) {
    v.viewCountText = views;
    const n = parseCount(views);
    if (n !== undefined && /\bviews?\b/i.test(views)) v.viewCount = n;
  }
  if (published) v.publishedText = published;
  if (parts.some((p) => UPCOMING.test(p))) v.isUpcoming = true;
  return v;
}

/** The 2025-2026 `lockupViewModel` of a videos or live tab (playlists and other lockups are skipped). */
function fromLockup(lockup: Record<string, unknown>): ListedVideo | undefined {
  const type = str(lockup.contentType);
  const videoId = str(lockup.contentId);
  if (!videoId || (type !== undefined && type !== 'LOCKUP_CONTENT_TYPE_VIDEO')) return undefined;
  const meta = at(lockup, 'metadata', 'lockupMetadataViewModel');
  const parts: string[] = [];
  for (const row of arr(at(meta, 'metadata', 'contentMetadataViewModel', 'metadataRows')))
    for (const part of arr(at(row, 'metadataParts'))) {
      const t = text(at(part, 'text'));
      if (t) parts.push(t);
    }
  const v: ListedVideo = { videoId, title: text(at(meta, 'title')) ?? '' };
  for (const badge of findAll(lockup.contentImage, 'thumbnailBadgeViewModel')) {
    const label = str(at(badge, 'text'));
    const style = str(at(badge, 'badgeStyle')) ?? '';
    const seconds = clockSeconds(label);
    if (seconds !== undefined) v.durationSeconds ??= seconds;
    else if (style.endsWith('_LIVE') || label === 'LIVE') v.isLive = true;
    else if (label && UPCOMING.test(label)) v.isUpcoming = true;
  }
  return withCounts(v, parts);
}

/** A Shorts tab item: id from the reel endpoint (or the entity id), title and views from the overlay. */
function fromShortsLockup(lockup: Record<string, unknown>): ListedVideo | undefined {
  const reel = findAll(lockup.onTap, 'reelWatchEndpoint', 1)[0];
  const videoId = str(at(reel, 'videoId')) ?? str(lockup.entityId)?.replace(/^shorts-shelf-item-/, '');
  if (!videoId) return undefined;
  const views = text(at(lockup, 'overlayMetadata', 'secondaryText'));
  return withCounts(
    { videoId, title: text(at(lockup, 'overlayMetadata', 'primaryText')) ?? '' },
    views ? [views] : [],
  );
}

/** Pre-2025 shapes (videoRenderer / gridVideoRenderer / reelItemRenderer), still served to some clients. */
function fromClassic(r: Record<string, unknown>): ListedVideo | undefined {
  const videoId = str(r.videoId);
  if (!videoId) return undefined;
  const v: ListedVideo = { videoId, title: text(r.title) ?? text(r.headline) ?? '' };
  const seconds = clockSeconds(text(r.lengthText));
  if (seconds !== undefined) v.durationSeconds = seconds;
  const parts = [text(r.viewCountText), text(r.publishedTimeText)].filter((p): p is string => !!p);
  for (const b of arr(r.badges))
    if (str(at(b, 'metadataBadgeRenderer', 'style')) === 'BADGE_STYLE_TYPE_LIVE_NOW') v.isLive = true;
  if (isObj(r.upcomingEventData)) v.isUpcoming = true;
  return withCounts(v, parts);
}

/** A video of a tab item in any of the shapes above, or undefined (continuation, shelf, playlist). */
export function itemVideo(item: unknown): ListedVideo | undefined {
  const node = at(item, 'richItemRenderer', 'content') ?? item;
  if (!isObj(node)) return undefined;
  if (isObj(node.lockupViewModel)) return fromLockup(node.lockupViewModel);
  if (isObj(node.shortsLockupViewModel)) return fromShortsLockup(node.shortsLockupViewModel);
  const classic = node.videoRenderer ?? node.gridVideoRenderer ?? node.reelItemRenderer;
  return isObj(classic) ? fromClassic(classic) : undefined;
}

function itemToken(item: unknown): string | undefined {
  const r = at(item, 'continuationItemRenderer') ?? at(item, 'continuationItemViewModel');
  return isObj(r) ? continuationToken(r) : undefined;
}

/** Videos and the next token of one item list (the grid's items, or a continuation's). */
function readItems(items: unknown[]): { videos: ListedVideo[]; nextToken?: string } {
  const videos: ListedVideo[] = [];
  let nextToken: string | undefined;
  for (const item of items) {
    const v = itemVideo(item);
    if (v) videos.push(v);
    else nextToken = itemToken(item) ?? nextToken;
  }
  return { videos, ...(nextToken ? { nextToken } : {}) };
}

/** The selected tab: its URL's last segment ("/@kurzgesagt/videos" → videos) and its content. */
function selectedTab(page: unknown): { name?: string; content?: unknown } {
  for (const t of arr(at(page, 'contents', 'twoColumnBrowseResultsRenderer', 'tabs'))) {
    const r = at(t, 'tabRenderer') ?? at(t, 'expandableTabRenderer');
    if (at(r, 'selected') !== true) continue;
    const url = str(at(r, 'endpoint', 'commandMetadata', 'webCommandMetadata', 'url')) ?? '';
    const name = url.split('?')[0]?.split('/').filter(Boolean).at(-1);
    return { ...(name ? { name } : {}), content: at(r, 'content') };
  }
  return {};
}

/** The grid of a tab: richGridRenderer (2023+), or the older section → item section → grid. */
function tabItems(content: unknown): unknown[] {
  const rich = at(content, 'richGridRenderer', 'contents');
  if (Array.isArray(rich)) return rich;
  return findAll(content, 'gridRenderer').flatMap((grid) => arr(at(grid, 'items')));
}

function handleOf(page: unknown): string | undefined {
  const vanity = str(at(page, 'metadata', 'channelMetadataRenderer', 'vanityChannelUrl'));
  const fromVanity = vanity && /\/@([^/?#]+)/.exec(vanity)?.[1];
  if (fromVanity) return decodeURIComponent(fromVanity);
  const c4 = text(at(page, 'header', 'c4TabbedHeaderRenderer', 'channelHandleText'));
  if (c4?.startsWith('@')) return c4.slice(1);
  const vm = at(page, 'header', 'pageHeaderRenderer', 'content', 'pageHeaderViewModel');
  for (const row of arr(at(vm, 'metadata', 'contentMetadataViewModel', 'metadataRows')))
    for (const part of arr(at(row, 'metadataParts'))) {
      const t = text(at(part, 'text'));
      if (t?.startsWith('@')) return t.slice(1);
    }
  return undefined;
}

function alertError(page: unknown): string | undefined {
  for (const a of arr(at(page, 'alerts'))) {
    const r = at(a, 'alertRenderer') ?? at(a, 'alertWithButtonRenderer');
    if (str(at(r, 'type')) === 'ERROR') return text(at(r, 'text')) ?? 'This channel is not available.';
  }
  return undefined;
}

/** A redirect to another channel id, as NewPipe follows it (auto-generated and localized channels). */
function redirectOf(page: unknown): string | undefined {
  const endpoint = at(page, 'onResponseReceivedActions', 0, 'navigateAction', 'endpoint');
  const type = str(at(endpoint, 'commandMetadata', 'webCommandMetadata', 'webPageType'));
  const id = str(at(endpoint, 'browseEndpoint', 'browseId'));
  return type && CHANNEL_PAGE_TYPES.has(type) && id?.startsWith('UC') ? id : undefined;
}

/** A tab's first `/browse` page: the channel, the selected tab and its first videos. */
export function parseChannelPage(page: unknown): ChannelPage {
  const error = alertError(page);
  if (error) return { error, videos: [] };
  const redirectTo = redirectOf(page);
  if (redirectTo) return { redirectTo, videos: [] };
  const meta = at(page, 'metadata', 'channelMetadataRenderer');
  const c4 = at(page, 'header', 'c4TabbedHeaderRenderer');
  const channelId = str(at(meta, 'externalId')) ?? str(at(c4, 'channelId'));
  const title =
    str(at(meta, 'title')) ??
    // an age-gated page has no header: the gate names the channel
    str(at(findAll(at(page, 'contents'), 'channelAgeGateRenderer', 1)[0], 'channelTitle')) ??
    str(at(page, 'header', 'pageHeaderRenderer', 'pageTitle')) ??
    text(at(c4, 'title'));
  const handle = handleOf(page);
  const tab = selectedTab(page);
  const gate = findAll(at(page, 'contents'), 'channelAgeGateRenderer', 1)[0];
  const ageGated = gate !== undefined;
  const { videos, nextToken } = readItems(tabItems(tab.content));
  return {
    ...(ageGated ? { ageGated } : {}),
    ...(channelId ? { channelId } : {}),
    ...(title !== undefined ? { title } : {}),
    ...(handle ? { handle } : {}),
    ...(tab.name ? { selectedTab: tab.name } : {}),
    videos,
    ...(nextToken ? { nextToken } : {}),
  };
}

/** A tab continuation: `onResponseReceivedActions[].appendContinuationItemsAction` (or a reload command). */
export function parseChannelContinuation(page: unknown): { videos: ListedVideo[]; nextToken?: string } {
  const items: unknown[] = [];
  for (const ep of [
    ...arr(at(page, 'onResponseReceivedActions')),
    ...arr(at(page, 'onResponseReceivedEndpoints')),
  ]) {
    const cmd = at(ep, 'appendContinuationItemsAction') ?? at(ep, 'reloadContinuationItemsCommand');
    items.push(...arr(at(cmd, 'continuationItems')));
  }
  return readItems(items);
}

/** The InnerTube `params` of each listable tab, as the channel page's own tab endpoints carry them. */
export const TAB_PARAMS: Record<ChannelTab, string> = {
  videos: 'EgZ2aWRlb3PyBgQKAjoA',
  shorts: 'EgZzaG9ydHPyBgUKA5oBAA%3D%3D',
  streams: 'EgdzdHJlYW1z8gYECgJ6AA%3D%3D',
};

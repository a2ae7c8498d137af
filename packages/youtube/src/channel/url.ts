import { parseHttpUrl } from '../url.ts';

/**
 * Channel URLs: `/@handle`, `/channel/UC…`, `/c/NAME` and `/user/NAME` on youtube.com (with or
 * without www. or m.), optionally followed by one channel page (`/videos`, `/shorts`, `/streams`, ...),
 * query strings ignored. Only the parts are kept: the URL a resolution sends to the platform is rebuilt
 * from them (`canonicalChannelUrl`), never the caller's string.
 */

/** The listable tabs: uploads, Shorts, and past or current live streams. */
export type ChannelTab = 'videos' | 'shorts' | 'streams';
export const CHANNEL_TABS: readonly ChannelTab[] = ['videos', 'shorts', 'streams'];

export type ChannelRef =
  | { kind: 'id'; channelId: string }
  /** Without the leading '@'. */
  | { kind: 'handle'; handle: string }
  /** A legacy custom URL, `/c/NAME`. */
  | { kind: 'custom'; name: string }
  /** A legacy user name, `/user/NAME`. */
  | { kind: 'user'; name: string };

export interface ParsedChannelUrl {
  ref: ChannelRef;
  /** The tab the URL's path names, when it names a listable one. */
  tab?: ChannelTab;
}

const CHANNEL_HOSTS = new Set(['www.youtube.com', 'youtube.com', 'm.youtube.com']);
const CHANNEL_ID = /^UC[A-Za-z0-9_-]{22}$/;
// Handles: 3-30 letters (any script), marks, digits, '_', '-', '.' and the middle dot, per YouTube's
// handle guidelines; legacy /c/ and /user/ names are looser, so only the characters are checked.
const HANDLE = /^[\p{L}\p{M}\p{N}._\-·]{3,30}$/u;
const LEGACY_NAME = /^[\p{L}\p{M}\p{N}._\-·]{1,100}$/u;
/** Channel pages a URL may point at; anything else after the channel is not a channel URL. */
const CHANNEL_PAGES = new Set([
  'featured',
  'videos',
  'shorts',
  'streams',
  'playlists',
  'community',
  'posts',
  'podcasts',
  'releases',
  'courses',
  'store',
  'about',
]);

function decodeSegment(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

export function parseChannelUrl(input: string): ParsedChannelUrl | null {
  const url = parseHttpUrl(input);
  if (!url || !CHANNEL_HOSTS.has(url.hostname.toLowerCase())) return null;
  // `//@x`, `/@x//videos`: empty segments are not forgiven, a single trailing slash is
  if (!/^(\/[^/]+)+\/?$/.test(url.pathname)) return null;
  const parts = url.pathname.split('/').filter(Boolean).map(decodeSegment);
  if (parts.some((p) => p === null)) return null;
  const segs = parts as string[];
  let ref: ChannelRef | undefined;
  let rest: string[];
  const head = segs[0] ?? '';
  if (head.startsWith('@')) {
    const handle = head.slice(1);
    if (!HANDLE.test(handle)) return null;
    ref = { kind: 'handle', handle };
    rest = segs.slice(1);
  } else {
    const name = segs[1] ?? '';
    if (head === 'channel' && CHANNEL_ID.test(name)) ref = { kind: 'id', channelId: name };
    else if (head === 'c' && LEGACY_NAME.test(name)) ref = { kind: 'custom', name };
    else if (head === 'user' && LEGACY_NAME.test(name)) ref = { kind: 'user', name };
    else return null;
    rest = segs.slice(2);
  }
  if (rest.length > 1) return null;
  const page = rest[0];
  if (page === undefined) return { ref };
  if (!CHANNEL_PAGES.has(page)) return null;
  return (CHANNEL_TABS as readonly string[]).includes(page) ? { ref, tab: page as ChannelTab } : { ref };
}

/** The URL `navigation/resolve_url` is asked about, built from the parts only. */
export function canonicalChannelUrl(ref: ChannelRef): string {
  const base = 'https://www.youtube.com/';
  switch (ref.kind) {
    case 'id':
      return `${base}channel/${ref.channelId}`;
    case 'handle':
      return `${base}@${encodeURIComponent(ref.handle)}`;
    case 'custom':
      return `${base}c/${encodeURIComponent(ref.name)}`;
    case 'user':
      return `${base}user/${encodeURIComponent(ref.name)}`;
  }
}

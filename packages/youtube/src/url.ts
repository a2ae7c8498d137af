/** URL forms accepted by docs/decisions.md "Inputs". The service never fetches a caller-supplied URL; it only reads the id. */

const VIDEO_ID = /^[A-Za-z0-9_-]{11}$/;
const PLAYLIST_ID = /^[A-Za-z0-9_-]{2,64}$/;
const WATCH_HOSTS = new Set(['www.youtube.com', 'youtube.com', 'm.youtube.com', 'music.youtube.com']);

// C0 controls, DEL and C1 controls: the WHATWG parser silently drops tabs and newlines
// (`youtu.be/dQw4w9W\tgXcQ` would parse), so they are refused before parsing, not after.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;

/**
 * An http(s) URL that can only be what it looks like: no control characters, no user info
 * (`https://user@youtube.com/...` names a different authority to some readers), no explicit port
 * (the platform's URLs never carry one). Surrounding spaces are forgiven.
 */
export function parseHttpUrl(input: string): URL | null {
  if (CONTROL.test(input)) return null;
  const trimmed = input.trim();
  if (!/^https?:\/\//i.test(trimmed)) return null;
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return null;
  }
  // On the raw authority too: the parser normalizes `https://@host` and a default port (`:443`) away.
  const authority = /^https?:\/\/([^/?#]*)/i.exec(trimmed)?.[1] ?? '';
  if (url.username !== '' || url.password !== '' || url.port !== '' || /[@:]/.test(authority)) return null;
  return url;
}

export function isVideoId(id: string): boolean {
  return VIDEO_ID.test(id);
}

// The forms nearly every request uses, exactly: read without building a URL (the WHATWG parser
// was about 3% of a cached extract's CPU). Anything else takes the full path below,
// which accepts these too.
const CANONICAL_VIDEO_URL =
  /^https:\/\/(?:(?:www\.|m\.)?youtube\.com\/watch\?v=|youtu\.be\/)([A-Za-z0-9_-]{11})$/;

export function parseVideoUrl(input: string): string | null {
  const canonical = CANONICAL_VIDEO_URL.exec(input);
  if (canonical) return canonical[1]!;
  const url = parseHttpUrl(input);
  if (!url) return null;
  const host = url.hostname.toLowerCase();
  let id: string | null = null;
  if (host === 'youtu.be') {
    // Exactly `/ID` (a trailing slash is forgiven): `youtu.be/ID/extra` is not a video URL.
    const parts = url.pathname.split('/').filter(Boolean);
    if (parts.length === 1 && /^\/[^/]+\/?$/.test(url.pathname)) id = parts[0] ?? null;
  } else if (WATCH_HOSTS.has(host)) {
    const parts = url.pathname.split('/').filter(Boolean);
    // `/watch/extra`, `//watch` and other paths around the id are not video URLs.
    if (!/^\/[^/]+(\/[^/]+)?\/?$/.test(url.pathname)) return null;
    if (parts.length === 1 && parts[0] === 'watch') id = url.searchParams.get('v');
    else if (parts.length === 2 && ['shorts', 'live', 'embed'].includes(parts[0] ?? ''))
      id = parts[1] ?? null;
  }
  return id !== null && VIDEO_ID.test(id) ? id : null;
}

export function parsePlaylistUrl(input: string): string | null {
  const url = parseHttpUrl(input);
  if (!url || !WATCH_HOSTS.has(url.hostname.toLowerCase())) return null;
  const path = url.pathname.replace(/\/+$/, '');
  if (path !== '/playlist' && path !== '/watch') return null;
  const list = url.searchParams.get('list');
  return list !== null && PLAYLIST_ID.test(list) ? list : null;
}

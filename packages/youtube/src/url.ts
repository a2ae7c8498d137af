/** URL forms accepted by decisions.md "Inputs". The service never fetches a caller-supplied URL; it only reads the id. */

const VIDEO_ID = /^[A-Za-z0-9_-]{11}$/;
const PLAYLIST_ID = /^[A-Za-z0-9_-]{2,64}$/;
const WATCH_HOSTS = new Set(['www.youtube.com', 'youtube.com', 'm.youtube.com', 'music.youtube.com']);

function parseHttpUrl(input: string): URL | null {
  const trimmed = input.trim();
  if (!/^https?:\/\//i.test(trimmed)) return null;
  try {
    return new URL(trimmed);
  } catch {
    return null;
  }
}

export function isVideoId(id: string): boolean {
  return VIDEO_ID.test(id);
}

export function parseVideoUrl(input: string): string | null {
  const url = parseHttpUrl(input);
  if (!url) return null;
  const host = url.hostname.toLowerCase();
  let id: string | null = null;
  if (host === 'youtu.be') {
    id = url.pathname.split('/')[1] ?? null;
  } else if (WATCH_HOSTS.has(host)) {
    const parts = url.pathname.split('/').filter(Boolean);
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

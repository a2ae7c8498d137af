// TEMPORARY stand-in until @subx/youtube exports parseVideoUrl/parsePlaylistUrl (being written
// concurrently); delete this file and import from '@subx/youtube' in video-urls.ts.
const ID = /^[A-Za-z0-9_-]{11}$/;
const HOSTS = new Set(['youtube.com', 'www.youtube.com', 'm.youtube.com', 'music.youtube.com']);

function parse(raw: string): URL | null {
  try {
    const url = new URL(raw.trim());
    return url.protocol === 'https:' || url.protocol === 'http:' ? url : null;
  } catch {
    return null;
  }
}

export function parseVideoUrl(raw: string): string | null {
  const url = parse(raw);
  if (!url) return null;
  if (url.hostname === 'youtu.be') {
    const id = url.pathname.slice(1);
    return ID.test(id) ? id : null;
  }
  if (!HOSTS.has(url.hostname)) return null;
  if (url.pathname === '/watch') {
    const id = url.searchParams.get('v') ?? '';
    return ID.test(id) ? id : null;
  }
  const m = /^\/(shorts|live|embed)\/([^/]+)\/?$/.exec(url.pathname);
  return m && ID.test(m[2]!) ? m[2]! : null;
}

export function parsePlaylistUrl(raw: string): string | null {
  const url = parse(raw);
  if (!url || !HOSTS.has(url.hostname)) return null;
  if (url.pathname !== '/playlist' && url.pathname !== '/watch') return null;
  const id = url.searchParams.get('list') ?? '';
  return /^[A-Za-z0-9_-]{2,64}$/.test(id) ? id : null;
}

/** Audio-only stream choice and ranged download, for transcribing videos that have no captions. */

/** Audio-only itags: 139 AAC 48 kbps, 140 AAC 128 kbps, 249/250/251 Opus ~50/70/160 kbps. */
export const AUDIO_ONLY_ITAGS: readonly number[] = [139, 140, 249, 250, 251];

export interface AudioFormat {
  itag: number;
  url: string;
  mimeType: string;
  bitrate: number;
  /** Bytes, when the player response tells it. */
  contentLength?: number;
  /** Milliseconds, when the player response tells it. */
  approxDurationMs?: number;
}

function num(value: unknown): number | undefined {
  const n = typeof value === 'string' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? n : undefined;
}

/**
 * The lowest-bitrate audio-only format of a player response (`streamingData.adaptiveFormats[]`)
 * whose URL is plain (a `url`, not a `signatureCipher` that would need the player's JavaScript).
 * Undefined when there is none.
 */
export function pickAudioFormat(playerResponse: unknown): AudioFormat | undefined {
  const formats = (playerResponse as { streamingData?: { adaptiveFormats?: unknown } } | null)?.streamingData
    ?.adaptiveFormats;
  if (!Array.isArray(formats)) return undefined;
  let best: AudioFormat | undefined;
  for (const raw of formats as Record<string, unknown>[]) {
    if (raw === null || typeof raw !== 'object') continue;
    const itag = num(raw.itag);
    if (itag === undefined || !AUDIO_ONLY_ITAGS.includes(itag)) continue;
    if (typeof raw.url !== 'string' || !/^https?:\/\//.test(raw.url)) continue;
    const format: AudioFormat = {
      itag,
      url: raw.url,
      mimeType: typeof raw.mimeType === 'string' ? raw.mimeType : '',
      bitrate: num(raw.bitrate) ?? num(raw.averageBitrate) ?? Number.MAX_SAFE_INTEGER,
    };
    const contentLength = num(raw.contentLength);
    if (contentLength !== undefined) format.contentLength = contentLength;
    const approxDurationMs = num(raw.approxDurationMs);
    if (approxDurationMs !== undefined) format.approxDurationMs = approxDurationMs;
    if (best === undefined || format.bitrate < best.bitrate) best = format;
  }
  return best;
}

/** The audio is larger than the download's cap. */
export class AudioTooLargeError extends Error {
  readonly code = 'AUDIO_TOO_LARGE';
  readonly maxBytes: number;
  constructor(maxBytes: number) {
    super(`the video's audio is larger than ${maxBytes} bytes`);
    this.maxBytes = maxBytes;
  }
}

/** The audio host answered an unexpected status or broke off. */
export class AudioFetchError extends Error {
  readonly code = 'AUDIO_FETCH_FAILED';
}

export interface AudioFetchOptions {
  /** Bytes per ranged request (default 1 MiB). */
  pieceBytes?: number;
  /** Cap on total bytes (default 25 MB): the download stops as soon as it would pass it. */
  maxBytes?: number;
  /** Bound on each piece's request (default 30 s). */
  pieceTimeoutMs?: number;
  signal?: AbortSignal;
  fetch?: typeof fetch;
  /**
   * The hosts audio is accepted from (audioHostsOf): a URL or a redirect to any other host is
   * refused before a byte is sent to it. Absent: any host (callers that pin nothing).
   */
  hosts?: readonly string[];
}

/** Redirects followed per piece, each to an accepted host. */
const MAX_REDIRECTS = 3;

/**
 * The hosts a player's audio URL may name: the platform's media hosts (googlevideo.com and its
 * subdomains), and the host of a configured stand-in for the platform (YOUTUBE_BASE_URL naming
 * another host, as tests and demos do), whose media it serves itself.
 */
export function audioHostsOf(baseUrl: string): string[] {
  const hosts = ['googlevideo.com'];
  const base = new URL(baseUrl).hostname.toLowerCase();
  if (!/(^|\.)youtube\.com$/.test(base)) hosts.push(base);
  return hosts;
}

/** Whether `url` is http(s) on one of `hosts` or a subdomain of one. */
export function isAudioHost(url: string, hosts: readonly string[]): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return false;
  const host = parsed.hostname.toLowerCase();
  return hosts.some((h) => host === h || host.endsWith(`.${h}`));
}

/**
 * Yields the audio at `url` as it arrives, with `Range: bytes=a-b` requests of `pieceBytes`
 * (unranged downloads are throttled). Each network chunk is handed on as it comes, never gathered
 * into a piece, so what the download holds is the chunk the reader is writing. Throws
 * AudioTooLargeError as soon as the total (from Content-Range, or counted) passes maxBytes.
 */
export async function* fetchAudioRanged(
  url: string,
  options: AudioFetchOptions = {},
): AsyncGenerator<Uint8Array> {
  const pieceBytes = options.pieceBytes ?? 1024 * 1024;
  const maxBytes = options.maxBytes ?? 25_000_000;
  const timeoutMs = options.pieceTimeoutMs ?? 30_000;
  const doFetch = options.fetch ?? fetch;
  const hosts = options.hosts;
  if (hosts && !isAudioHost(url, hosts))
    throw new AudioFetchError(`the audio URL names a host that is not the platform's media host`);
  let offset = 0;
  let total: number | undefined;
  for (;;) {
    const signals = [AbortSignal.timeout(timeoutMs)];
    if (options.signal) signals.push(options.signal);
    const signal = AbortSignal.any(signals);
    const range = { range: `bytes=${offset}-${offset + pieceBytes - 1}` };
    // Redirects are followed here, each checked, never by fetch on its own.
    let res = await doFetch(url, { headers: range, signal, redirect: 'manual' });
    for (let hop = 0; res.status >= 300 && res.status < 400 && hop < MAX_REDIRECTS; hop += 1) {
      const location = res.headers.get('location');
      await res.body?.cancel().catch(() => undefined);
      const next = location ? new URL(location, url).toString() : '';
      if (!next || (hosts && !isAudioHost(next, hosts)))
        throw new AudioFetchError(
          "the audio host redirected to a host that is not the platform's media host",
        );
      res = await doFetch(next, { headers: range, signal, redirect: 'manual' });
    }
    if (res.status === 416 && total === undefined && offset > 0) return;
    if (res.status !== 206 && res.status !== 200) {
      await res.body?.cancel().catch(() => undefined);
      throw new AudioFetchError(`audio host answered ${res.status}`);
    }
    if (res.status === 206) {
      const match = /\/(\d+)\s*$/.exec(res.headers.get('content-range') ?? '');
      if (match) total = Number(match[1]);
    } else {
      const length = num(res.headers.get('content-length') ?? undefined);
      if (length !== undefined) total = length;
    }
    if (total !== undefined && total > maxBytes) {
      await res.body?.cancel().catch(() => undefined);
      throw new AudioTooLargeError(maxBytes);
    }
    if (!res.body) throw new AudioFetchError('audio host sent no body');
    // A 200 is the whole file (a host ignoring Range): only the total cap bounds it.
    const pieceCap = res.status === 206 ? pieceBytes : Number.POSITIVE_INFINITY;
    let got = 0;
    const reader = res.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        got += value.byteLength;
        if (offset + got > maxBytes) throw new AudioTooLargeError(maxBytes);
        if (got > pieceCap) throw new AudioFetchError(`audio piece larger than the ${pieceCap} bytes asked`);
        if (value.byteLength > 0) yield value;
      }
    } finally {
      reader.cancel().catch(() => undefined);
    }
    offset += got;
    if (res.status === 200 || got === 0) return;
    if (total !== undefined ? offset >= total : got < pieceBytes) return;
  }
}

/**
 * InnerTube client contexts. Versions get retired every few months (ANDROID 19.x answers 400 since Aug 2026),
 * so these are data: override any field with YOUTUBE_CLIENTS, no code change needed. Sources and dates: the
 * client tables of yt-dlp (`_base.py` INNERTUBE_CLIENTS), YouTube.js and NewPipe as of Aug 2026; ANDROID 19.x
 * gets HTTP 400 on /player since 2026-08-18 (lavalink youtube-source PR #231).
 */
export interface InnertubeClient {
  /** context.client.clientName */
  name: string;
  /** X-YouTube-Client-Name */
  id: number;
  version: string;
  userAgent: string;
  /** Extra context.client fields (device, OS). */
  extra?: Record<string, unknown>;
  /** Whether its /player responses carry `microformat` (upload date, category): only WEB-family clients do. */
  hasMicroformat: boolean;
  /**
   * `playbackContext.contentPlaybackContext.signatureTimestamp` for WEB-family /player requests. Without it
   * WEB answers without `captions` (since Aug 2026); it is only sent when WEB is on the caption ladder,
   * i.e. with a PO-token provider. The value comes from the player JS; a stale one keeps working for weeks.
   */
  signatureTimestamp?: number;
  /**
   * A candidate identity behind a canary: never on the caption ladder until its probes have fetched
   * caption bodies that answer (ladder/adaptive-ladder.ts, "candidates"); demoted again by one failure.
   * `false` (YOUTUBE_CLIENTS) switches the candidate off.
   */
  canary?: boolean;
  /**
   * Its stream (audio) URLs need a GVS PO token (yt-dlp 2026.11.23: WEB, and WEB_EMBEDDED for its
   * HTTPS formats). We never carry one on a stream URL, so such a client is never asked for audio:
   * skipped, rather than a request failed on it.
   */
  streamsNeedPoToken?: boolean;
  /**
   * Asked only after every client of the ladder answered the video unplayable (the made-for-kids
   * videos logged-out clients refuse), as yt-dlp appends `ios_producer` then. With `canary: true`
   * its probes fetch audio, not captions, and it is asked only once they have proven it.
   */
  fallbackForUnplayable?: boolean;
}

/**
 * WEB-family clients: their caption URLs carry `exp=xpe` and answer an empty body without a PO token
 * (since 27 Aug 2026), and their /player omits `captions` without a signatureTimestamp. Never a source of
 * caption tracks unless a PO-token provider is configured.
 */
export function isWebFamily(client: InnertubeClient): boolean {
  return /^(WEB|MWEB|TVHTML5)/.test(client.name);
}

export const DEFAULT_CLIENTS: Record<string, InnertubeClient> = {
  WEB: {
    name: 'WEB',
    id: 1,
    // healed at run time from /sw.js_data on 400 FAILED_PRECONDITION and every YOUTUBE_VERSION_REFRESH_MS
    version: '2.20261115.01.00',
    userAgent:
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/149.0.0.0 Safari/537.36,gzip(gfe)',
    hasMicroformat: true,
    signatureTimestamp: 20405,
    streamsNeedPoToken: true,
  },
  /**
   * The embedded player (version as in yt-dlp's `web_embedded`): on no default ladder (web-family:
   * its captions need a PO-token provider too); since yt-dlp 2026.11.23 its HTTPS streams need a GVS
   * PO token, like WEB's.
   */
  WEB_EMBEDDED: {
    name: 'WEB_EMBEDDED_PLAYER',
    id: 56,
    version: '1.20260115.01.00',
    userAgent:
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/149.0.0.0 Safari/537.36,gzip(gfe)',
    hasMicroformat: true,
    signatureTimestamp: 20405,
    streamsNeedPoToken: true,
  },
  ANDROID: {
    name: 'ANDROID',
    id: 3,
    version: '21.26.364',
    userAgent: 'com.google.android.youtube/21.26.364 (Linux; U; Android 11) gzip',
    extra: { androidSdkVersion: 30, osName: 'Android', osVersion: '11' },
    hasMicroformat: false,
  },
  VISIONOS: {
    name: 'VISIONOS',
    id: 101,
    version: '1.04',
    userAgent:
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.0 Safari/605.1.15',
    extra: {
      deviceMake: 'Apple',
      deviceModel: 'RealityDevice17,1',
      osName: 'visionOS',
      osVersion: '26.5.23O471',
    },
    hasMicroformat: false,
  },
  IOS: {
    name: 'IOS',
    id: 5,
    version: '21.26.4',
    userAgent: 'com.google.ios.youtube/21.26.4 (iPhone16,2; U; CPU iOS 18_3_2 like Mac OS X;)',
    extra: { deviceMake: 'Apple', deviceModel: 'iPhone16,2', osName: 'iPhone', osVersion: '18.3.2.22D82' },
    hasMicroformat: false,
  },
  /**
   * yt-dlp 2026.10.21 added `tv_samsung` and made it first of its logged-out defaults (2026.10.26
   * `_base.py`: TVHTML5 5.20260707, client name id 7, a Tizen 2.4 Samsung user agent, no subtitle
   * PO-token policy). TV clients answered empty captions in September's probes, so it is a canary:
   * adopted for captions only once its probes' caption URLs answer with a body.
   */
  TV_SAMSUNG: {
    name: 'TVHTML5',
    id: 7,
    version: '5.20260707',
    userAgent:
      'Mozilla/5.0 (SMART-TV; Linux; Tizen 2.4.0) AppleWebKit/538.1 (KHTML, like Gecko) Version/2.4.0 TV Safari/538.1',
    extra: { deviceMake: 'Samsung', deviceModel: 'UKS9800', osName: 'Tizen', osVersion: '2.4.0' },
    hasMicroformat: false,
    canary: true,
  },
  /**
   * yt-dlp 2026.11.23's `ios_producer` (client name id 92; no player JavaScript; H.264 and mp4a
   * formats only), appended when the logged-out clients answer a made-for-kids video unplayable. A
   * candidate for the audio of such videos: proven by canary probes that fetch audio, then asked
   * after the ladder when every client of it answered the video unplayable.
   */
  IOS_PRODUCER: {
    name: 'IOS_PRODUCER',
    id: 92,
    version: '0.147.945',
    userAgent: 'com.google.ios.youtubeproducer/0.147.945 (iPhone16,2; U; CPU iOS 18_3_2 like Mac OS X;)',
    extra: { deviceMake: 'Apple', deviceModel: 'iPhone16,2', osName: 'iPhone', osVersion: '18.3.2.22D82' },
    hasMicroformat: false,
    canary: true,
    fallbackForUnplayable: true,
  },
};

/**
 * The caption ladder: clients whose caption URLs are not gated (no `exp=xpe`), tried in order for /player.
 * VISIONOS first as yt-dlp (2026.08) does, then ANDROID (youtube-transcript-api), then IOS (NewPipe's
 * fallbacks). WEB joins at the end only with a PO-token provider (YOUTUBE_PO_TOKEN_PROVIDER_URL).
 */
export const DEFAULT_CAPTION_CLIENTS = ['VISIONOS', 'ANDROID', 'IOS'];

/**
 * The candidate identities of `clients` (`canary: true`) not already on the configured ladder, in
 * catalogue order: probed by the canaries, served only once adopted (ladder/adaptive-ladder.ts).
 */
export function candidateClients(
  clients: Record<string, InnertubeClient>,
  ladder: readonly string[],
): string[] {
  return Object.entries(clients)
    .filter(([name, c]) => c.canary === true && !ladder.includes(name))
    .map(([name]) => name);
}

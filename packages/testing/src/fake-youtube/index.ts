import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createFakeChannels, type SyntheticChannelSpec } from './channels.ts';
import { fixturesDir, loadFixture, readSynthetic, type FixtureRef, type LoadedResponse } from './fixtures.ts';
import {
  RECORDED_CONTINUATIONS,
  defaultRoutes,
  okPlayer,
  playlistIds,
  todayPlaylistShapes,
  videoIds,
  type RouteTable,
} from './routes.ts';
import {
  generateComments,
  generatePlaylist,
  genericCues,
  numberedCues,
  renderCaptions,
} from './synthetic.ts';
import {
  FAILED_PRECONDITION,
  LOGIN_REQUIRED,
  PAGE_RELOAD,
  TRY_AGAIN_LATER,
  builtContinuationPage,
  emptied,
  flatFirstPage,
  headerOnlyFirstPage,
  isWebFamily,
  playabilityAnswer,
  swJsData,
  todayPlayer,
  versionLess,
  type Playability,
  type PlaylistShape,
} from './today.ts';
import { freshVisitorData, parseCommentsContinuation, parsePlaylistContinuation } from './tokens.ts';

/**
 * A fake YouTube on 127.0.0.1:0 that replays the recorded responses of packages/testing/fixtures-recorded (and synthetic
 * caption bodies / comment pages / playlists where nothing was recorded). Point YOUTUBE_BASE_URL at `url`.
 * Mode `replay` answers as recorded; mode `today` answers the way the platform behaves since late Aug 2026
 * (README.md).
 */

export {
  videoIds,
  playlistIds,
  defaultRoutes,
  todayPlaylistShapes,
  type RouteTable,
  type VideoRoute,
} from './routes.ts';
export {
  fixturesDir,
  loadFixture,
  extractHtmlVar,
  readSynthetic,
  type FixtureRef,
  type DerivedRef,
} from './fixtures.ts';
export * from './synthetic.ts';
export * from './channels.ts';
export * from './tokens.ts';
export { isWebFamily, versionLess, type Playability, type PlaylistShape } from './today.ts';

export type Endpoint =
  | 'player'
  | 'next'
  | 'browse'
  | 'resolve_url'
  | 'timedtext'
  | 'visitor_id'
  | 'sw_js_data'
  | 'watch'
  | 'other';

export type FakeMode = 'today' | 'replay';

export interface RecordedRequest {
  method: string;
  path: string;
  endpoint: Endpoint;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  body?: unknown;
  clientName?: string;
  clientVersion?: string;
  /** Header `X-Goog-Visitor-Id`, else `context.client.visitorData`. */
  visitorData?: string;
  videoId?: string;
  continuation?: string;
  browseId?: string;
  status: number;
}

export type Failure =
  | { kind: 'status'; status: number; body?: string }
  | { kind: 'delay'; ms: number }
  | { kind: 'reset' }
  | { kind: 'emptyCaptionBody' }
  | { kind: 'captcha' }
  | { kind: 'botCheck' }
  | { kind: 'differentVideo' }
  // the kinds below answer /player only (unless `endpoint` says otherwise)
  | {
      kind: 'playability';
      status: 'ERROR' | 'UNPLAYABLE' | 'LOGIN_REQUIRED';
      reason: string;
      subreason?: string;
    }
  /** ERROR "The page needs to be reloaded." (a session signal, not unavailability). */
  | { kind: 'pageReload' }
  /** LOGIN_REQUIRED "Sign in to continue": neither age nor privacy. */
  | { kind: 'loginRequired' }
  /** The session rate limit: UNPLAYABLE "Video unavailable" / "This content isn’t available, try again later." */
  | { kind: 'tryAgainLater' }
  /** A /next continuation answered with its page emptied of items (same shape). */
  | { kind: 'emptyCommentsPage' }
  /** A /browse answer with its header and video count but no items and no continuation. */
  | { kind: 'emptyPlaylistPage' };

export interface FailureMatch {
  /** Default: any endpoint, except the kinds that imply one (playability kinds: player, empty pages: next / browse). */
  endpoint?: Endpoint;
  /** context.client.clientName of the request. */
  client?: string;
  /** The request's videoId (player / next body, timedtext `v`). */
  videoId?: string;
  /** Every entry must equal the request's query parameter, e.g. `{ tlang: 'de' }` or `{ fmt: 'json3' }`. */
  query?: Record<string, string>;
  /** How many matching requests fail (default 1). */
  times?: number;
}

export interface FakeYouTubeOptions {
  /** 'today' (default): the platform since late Aug 2026 (README.md). 'replay': as recorded. */
  mode?: FakeMode;
  /** Merged over the default routing table. */
  routes?: Partial<RouteTable>;
  /** Added to every answer (per-endpoint overrides: setLatency(ms, endpoint)). */
  latencyMs?: number;
  fixturesDir?: string;
  /** Today mode: how long a gated (`exp=xpe|xpv`, no `pot`) timedtext GET takes to answer empty (default 2000). */
  gatedCaptionDelayMs?: number;
  /** After this many /player calls with the same visitorData, that visitor gets the bot check on /player. */
  sessionQuota?: number;
  /** A WEB-family player/next/browse with an older context.client.clientVersion answers 400 FAILED_PRECONDITION. */
  minWebClientVersion?: string;
  /** The WEB client version `/sw.js_data` announces (default '2.20261115.01.00'). */
  webClientVersion?: string;
  /** Today mode: first-page shape per playlist id, merged over todayPlaylistShapes(). */
  playlistShapes?: Record<string, PlaylistShape>;
  /** Where to listen (default 127.0.0.1 on a free port); the demo container listens on 0.0.0.0:8079. */
  host?: string;
  port?: number;
  /**
   * Caption bodies of these videos (every track, untranslated) are this many generated cues instead
   * of the recorded or three-cue bodies: answers of a chosen size, for the benchmarks.
   */
  captionCues?: Record<string, number>;
  /** More generated channels (channels.ts), beside the default synthetic one. */
  syntheticChannels?: SyntheticChannelSpec[];
}

export interface FakeYouTube {
  url: string;
  requests: RecordedRequest[];
  readonly mode: FakeMode;
  setMode(mode: FakeMode): void;
  /** Requests of one endpoint (or all). */
  count(endpoint?: Endpoint): number;
  /** Latency of every answer, or of one endpoint's answers (overrides the general one). */
  setLatency(ms: number, endpoint?: Endpoint): void;
  setGatedCaptionDelay(ms: number): void;
  setMinWebClientVersion(version: string | undefined): void;
  setWebClientVersion(version: string): void;
  setPlaylistShape(playlistId: string, shape: PlaylistShape): void;
  /**
   * Retire an InnerTube client the way the platform does overnight (VISIONOS on 2026-09-11): from now on
   * every /player as that client answers 400 FAILED_PRECONDITION. `restoreClient` undoes it.
   */
  retireClient(clientName: string): void;
  restoreClient(clientName: string): void;
  /** Every visitorData handed out by /youtubei/v1/visitor_id and /sw.js_data, in order. */
  visitorDataIssued: string[];
  failNext(failure: Failure, match?: FailureMatch): void;
  /** Serve every caption body in this format whatever `fmt` asks (undefined: honour `fmt`). */
  setCaptionFormat(format: 'json3' | 'srv3' | 'srv1' | undefined): void;
  /** Forget recorded requests, pending failures, per-visitor /player counts and issued visitorData. */
  reset(): void;
  routes: RouteTable;
  close(): Promise<void>;
}

const JSON_TYPE = 'application/json; charset=UTF-8';

function mergeRoutes(base: RouteTable, extra: Partial<RouteTable> | undefined): RouteTable {
  return {
    videos: { ...base.videos, ...extra?.videos },
    continuations: { ...base.continuations, ...extra?.continuations },
    playlists: { ...base.playlists, ...extra?.playlists },
  };
}

/** Adds the synthetic comments video, the synthetic playlist and the recorded continuation pages. */
function withSyntheticAndRecorded(routes: RouteTable, dir: string): RouteTable {
  const comments = generateComments({
    videoId: videoIds.syntheticComments,
    topLevel: 45,
    perPage: 20,
    repliesEvery: 4,
    repliesPerThread: 3,
    replyPageSize: 2,
    inlineEvery: 10,
    totalText: '1.2K',
  });
  routes.videos[videoIds.syntheticComments] ??= {
    player: okPlayer(videoIds.syntheticComments, 'synthetic comments'),
    next: { inline: comments.next },
    comments: { inline: comments.pages.get(comments.topToken) },
    note: 'synthetic comments: 3 pages, replies behind continuations (2 per page) and inline subThreads',
  };
  for (const [token, page] of comments.pages) routes.continuations[token] ??= { inline: page };
  const hidden = generateComments({
    videoId: videoIds.commentsNoPanel,
    topLevel: 25,
    perPage: 20,
    repliesEvery: 5,
    repliesPerThread: 2,
    replyPageSize: 2,
    totalText: '31',
  });
  routes.videos[videoIds.commentsNoPanel] ??= {
    player: okPlayer(videoIds.commentsNoPanel, 'synthetic comments without a panel'),
    next: { inline: withoutCommentsEntry(hidden.next) },
    comments: { inline: hidden.pages.get(hidden.topToken) },
    note: 'SYNTHETIC: watch-next without any comments entry (no section, no panel, no "turned off" message) while 25 comments exist: only the locally built comments continuation reaches them',
  };
  for (const [token, page] of hidden.pages) routes.continuations[token] ??= { inline: page };
  const pl = generatePlaylist({ playlistId: playlistIds.synthetic, videos: 250 });
  routes.playlists[playlistIds.synthetic] ??= { inline: pl.first };
  for (const [token, page] of pl.pages) routes.continuations[token] ??= { inline: page };
  for (const file of RECORDED_CONTINUATIONS) {
    const mock = JSON.parse(readFileSync(dir + file, 'utf8')) as { request: { dataToSend?: number[] } };
    const body = JSON.parse(Buffer.from(mock.request.dataToSend ?? []).toString('utf8')) as {
      continuation?: string;
    };
    if (body.continuation) routes.continuations[body.continuation] ??= { file };
  }
  return routes;
}

const json = (value: unknown, status = 200): LoadedResponse => ({
  status,
  contentType: JSON_TYPE,
  body: JSON.stringify(value),
});

/** The endpoint a failure kind implies when the matcher names none. */
const IMPLIED_ENDPOINT: Partial<Record<Failure['kind'], Endpoint>> = {
  playability: 'player',
  pageReload: 'player',
  loginRequired: 'player',
  tryAgainLater: 'player',
  emptyCommentsPage: 'next',
  emptyPlaylistPage: 'browse',
};

const PLAYABILITY_KINDS: Partial<Record<Failure['kind'], Playability>> = {
  pageReload: PAGE_RELOAD,
  loginRequired: LOGIN_REQUIRED,
  tryAgainLater: TRY_AGAIN_LATER,
};

const API_KEY = 'AIzaSy-SUBX-FAKE-YOUTUBE-NOT-A-REAL-KEY';

/** A watch-next without the comment-item-section and the comments engagement panel. */
function withoutCommentsEntry(next: unknown): unknown {
  const copy = structuredClone(next) as {
    _synthetic?: string;
    contents: { twoColumnWatchNextResults: { results: { results: { contents: unknown[] } } } };
    engagementPanels?: unknown[];
  };
  const results = copy.contents.twoColumnWatchNextResults.results.results;
  results.contents = results.contents.filter(
    (c) =>
      (c as { itemSectionRenderer?: { sectionIdentifier?: string } }).itemSectionRenderer
        ?.sectionIdentifier !== 'comment-item-section',
  );
  delete copy.engagementPanels;
  copy._synthetic = 'SYNTHETIC watch-next without any comments entry';
  return copy;
}

function applyFieldMask(body: string, fields: string | undefined): string {
  if (!fields) return body;
  const keep = new Set(fields.split(',').map((f) => f.split(/[.(/]/)[0]?.trim()));
  const obj = JSON.parse(body) as Record<string, unknown>;
  return JSON.stringify(Object.fromEntries(Object.entries(obj).filter(([k]) => keep.has(k))));
}

export async function startFakeYouTube(options: FakeYouTubeOptions = {}): Promise<FakeYouTube> {
  const dir = options.fixturesDir ?? fixturesDir();
  const routes = withSyntheticAndRecorded(mergeRoutes(defaultRoutes(), options.routes), dir);
  const requests: RecordedRequest[] = [];
  let mode: FakeMode = options.mode ?? 'today';
  let latency = options.latencyMs ?? 0;
  const endpointLatency = new Map<Endpoint, number>();
  let gatedCaptionDelay = options.gatedCaptionDelayMs ?? 2000;
  let minWebClientVersion = options.minWebClientVersion;
  let webClientVersion = options.webClientVersion ?? '2.20261115.01.00';
  const playlistShapes: Record<string, PlaylistShape> = {
    ...todayPlaylistShapes(),
    ...options.playlistShapes,
  };
  const playerCallsByVisitor = new Map<string, number>();
  const retiredClients = new Set<string>();
  const visitorDataIssued: string[] = [];
  let captionFormat: 'json3' | 'srv3' | 'srv1' | undefined;
  const failures: { failure: Failure; match: FailureMatch; left: number }[] = [];
  const load = (ref: FixtureRef): LoadedResponse => loadFixture(ref, dir);
  const channels = createFakeChannels({ routes, dir, load, synthetic: options.syntheticChannels });

  const matches = (m: FailureMatch, failure: Failure, rec: RecordedRequest): boolean => {
    const endpoint = m.endpoint ?? IMPLIED_ENDPOINT[failure.kind];
    if (endpoint !== undefined && endpoint !== rec.endpoint) return false;
    if (failure.kind === 'emptyCommentsPage' && rec.continuation === undefined) return false;
    if (m.client !== undefined && m.client !== rec.clientName) return false;
    if (m.videoId !== undefined && m.videoId !== rec.videoId) return false;
    return Object.entries(m.query ?? {}).every(([k, v]) => rec.query[k] === v);
  };

  const takeFailure = (rec: RecordedRequest): Failure | undefined => {
    const i = failures.findIndex((f) => matches(f.match, f.failure, rec));
    if (i < 0) return undefined;
    const f = failures[i] as (typeof failures)[number];
    if (--f.left <= 0) failures.splice(i, 1);
    return f.failure;
  };

  const notFoundPlayer = (): LoadedResponse =>
    load({ file: 'newpipe/9730de2/stream/notAvailable/generated_mock_4.json' });
  const badContinuation = (): LoadedResponse => ({
    status: 400,
    contentType: JSON_TYPE,
    body: JSON.stringify({
      error: { code: 400, message: 'Request contains an invalid argument.', status: 'INVALID_ARGUMENT' },
    }),
  });

  function player(rec: RecordedRequest, url: URL): LoadedResponse {
    const videoId = rec.videoId ?? '';
    const v = routes.videos[videoId];
    if (!v) return notFoundPlayer();
    const client = rec.clientName ?? '';
    const refusal = v.playability?.[client];
    if (refusal) return json(playabilityAnswer(refusal, `${client} refuses ${videoId}`));
    const fields = url.searchParams.get('$fields') ?? undefined;
    const today = mode === 'today';
    const table = today ? { ...v.player, ...v.todayPlayer } : v.player;
    // a non-WEB client without its own entry or '*' gets the WEB recording (cleaned in today mode)
    const ref =
      (fields && v.microformat) || table[client] || table['*'] || table.WEB || Object.values(table)[0];
    if (!ref) return notFoundPlayer();
    const res = load(ref);
    let body = res.body;
    if (today && res.status === 200) {
      const playback = (
        rec.body as { playbackContext?: { contentPlaybackContext?: Record<string, unknown> } }
      )?.playbackContext?.contentPlaybackContext;
      body = todayPlayer(body, rec.clientName, playback?.signatureTimestamp !== undefined);
    }
    return { ...res, body: applyFieldMask(body, fields) };
  }

  function browseFirstPage(rec: RecordedRequest, url: URL): LoadedResponse {
    const id = (rec.browseId ?? '').replace(/^VL/, '');
    const ref = routes.playlists[id] ?? {
      file: 'newpipe/62b3c3b/playlist/notAvailable/generated_mock_3.json',
    };
    const res = load(ref);
    if (mode !== 'today' || res.status !== 200) return res;
    const shape = playlistShapes[id] ?? 'classic';
    const fields = url.searchParams.get('$fields') ?? undefined;
    if (shape === 'classic') return { ...res, body: applyFieldMask(res.body, fields) };
    const page = JSON.parse(res.body) as Record<string, unknown>;
    const shaped = shape === 'flat' ? flatFirstPage(page) : headerOnlyFirstPage(page);
    return { ...res, body: applyFieldMask(JSON.stringify(shaped), fields) };
  }

  /** A continuation the client built itself: decoded, not looked up (tokens.ts). */
  function builtContinuation(endpoint: Endpoint, token: string): LoadedResponse | undefined {
    if (endpoint === 'next') {
      const ref = routes.videos[parseCommentsContinuation(token) ?? '']?.comments;
      return ref ? load(ref) : undefined;
    }
    const built = parsePlaylistContinuation(token);
    const ref = built && routes.playlists[built.playlistId];
    if (!built || !ref) return undefined;
    const page = builtContinuationPage(
      built.playlistId,
      JSON.parse(load(ref).body) as Record<string, unknown>,
      built.start,
    );
    return page ? json(page) : undefined;
  }

  function route(rec: RecordedRequest, url: URL): LoadedResponse {
    const body = (rec.body ?? {}) as Record<string, unknown>;
    if (typeof body.continuation === 'string' && (rec.endpoint === 'next' || rec.endpoint === 'browse')) {
      const ref = routes.continuations[body.continuation];
      if (ref) return load(ref);
      return builtContinuation(rec.endpoint, body.continuation) ?? badContinuation();
    }
    const channel = channels.route(rec.endpoint, body);
    if (channel) return channel;
    switch (rec.endpoint) {
      case 'player':
        return player(rec, url);
      case 'next': {
        const v = routes.videos[rec.videoId ?? ''];
        if (!v?.next)
          return {
            status: 200,
            contentType: JSON_TYPE,
            body: JSON.stringify({ responseContext: {}, trackingParams: 'fake' }),
          };
        return load(v.next);
      }
      case 'browse':
        return browseFirstPage(rec, url);
      case 'timedtext':
        return timedtext(url);
      case 'visitor_id': {
        const visitorData = freshVisitorData();
        visitorDataIssued.push(visitorData);
        return json({ responseContext: { visitorData } });
      }
      case 'sw_js_data': {
        const visitorData = freshVisitorData();
        visitorDataIssued.push(visitorData);
        return {
          status: 200,
          contentType: 'application/json; charset=utf-8',
          body: swJsData(visitorData, webClientVersion, API_KEY),
        };
      }
      case 'watch':
        return watchPage(url.searchParams.get('v') ?? '');
      default:
        return { status: 404, contentType: 'text/plain', body: 'not found' };
    }
  }

  /**
   * GET /watch?v=: what other extractors (youtube-transcript-api, yt-dlp) read first. SYNTHETIC: a small
   * page carrying the ytcfg values they look for (INNERTUBE_API_KEY, the client version) and the
   * player response the fake would give WEB, so the benchmarks can run them against this fake. Our
   * client never fetches HTML.
   */
  function watchPage(videoId: string): LoadedResponse {
    const video = routes.videos[videoId];
    const asWeb: RecordedRequest = {
      method: 'POST',
      path: '/youtubei/v1/player',
      endpoint: 'player',
      query: {},
      headers: {},
      body: { videoId, context: { client: { clientName: 'WEB' } } },
      clientName: 'WEB',
      videoId,
      status: 0,
    };
    const player = video ? route(asWeb, new URL('http://127.0.0.1/youtubei/v1/player')) : undefined;
    const cfg = JSON.stringify({ INNERTUBE_API_KEY: API_KEY, INNERTUBE_CLIENT_VERSION: webClientVersion });
    const html =
      '<!DOCTYPE html><html><head><title>SYNTHETIC watch page of @subx/testing fake-youtube</title></head><body>' +
      `<script>ytcfg.set(${cfg});</script>` +
      (player ? `<script>var ytInitialPlayerResponse = ${player.body};</script>` : '') +
      '</body></html>';
    return { status: 200, contentType: 'text/html; charset=utf-8', body: html };
  }

  /** What the platform does before it looks at the content: version rot and per-session quotas. */
  function platformRefusal(rec: RecordedRequest): LoadedResponse | undefined {
    const innertube = rec.endpoint === 'player' || rec.endpoint === 'next' || rec.endpoint === 'browse';
    if (rec.endpoint === 'player' && rec.clientName !== undefined && retiredClients.has(rec.clientName))
      return { status: 400, contentType: JSON_TYPE, body: FAILED_PRECONDITION };
    if (
      innertube &&
      minWebClientVersion !== undefined &&
      isWebFamily(rec.clientName) &&
      versionLess(rec.clientVersion ?? '0', minWebClientVersion)
    )
      return { status: 400, contentType: JSON_TYPE, body: FAILED_PRECONDITION };
    if (rec.endpoint === 'player' && options.sessionQuota !== undefined) {
      const key = rec.visitorData ?? '';
      const calls = (playerCallsByVisitor.get(key) ?? 0) + 1;
      playerCallsByVisitor.set(key, calls);
      if (calls > options.sessionQuota)
        return load({ file: 'youtube-transcript-api/85c8594/youtube_request_blocked.innertube.json.static' });
    }
    return undefined;
  }

  /**
   * Today mode: like the platform, an InnerTube answer names the caller's visitor in
   * responseContext.visitorData, a fresh one when the request carried none (recordings hold whatever
   * visitor they were recorded with, which would make every caller the same visitor).
   */
  function withSessionVisitor(out: LoadedResponse, rec: RecordedRequest): LoadedResponse {
    const innertube = rec.endpoint === 'player' || rec.endpoint === 'next' || rec.endpoint === 'browse';
    if (!innertube || out.status !== 200 || !out.contentType.includes('json')) return out;
    let body: unknown;
    try {
      body = JSON.parse(out.body);
    } catch {
      return out;
    }
    if (typeof body !== 'object' || body === null || !('responseContext' in body)) return out;
    let visitorData = rec.visitorData;
    if (!visitorData) {
      visitorData = freshVisitorData();
      visitorDataIssued.push(visitorData);
    }
    const b = body as { responseContext: Record<string, unknown> };
    b.responseContext = { ...b.responseContext, visitorData };
    return { ...out, body: JSON.stringify(b) };
  }

  /** Today mode: how long a gated caption URL takes to answer empty. */
  const isGated = (url: URL): boolean =>
    /xp[ev]/.test(url.searchParams.get('exp') ?? '') && !url.searchParams.get('pot');

  function timedtext(url: URL): LoadedResponse {
    const q = url.searchParams;
    const v = q.get('v') ?? '';
    const lang = q.get('lang') ?? '';
    const asr = q.get('kind') === 'asr';
    const tlang = q.get('tlang') ?? undefined;
    const fmt = captionFormat ?? q.get('fmt');
    const video = routes.videos[v];
    const exp = q.get('exp') ?? '';
    // like YouTube: a PO-token URL without `pot`, an unknown video or a track it does not have → empty 200
    if (!video || !lang || (/xp[ev]/.test(exp) && !q.get('pot')))
      return { status: 200, contentType: 'text/html; charset=UTF-8', body: '' };
    const files = video.captions?.[`${asr ? 'a.' : ''}${lang}`];
    const file = tlang
      ? undefined
      : fmt === 'json3'
        ? files?.json3
        : fmt === 'srv3'
          ? files?.srv3
          : files?.srv1;
    const type = fmt === 'json3' ? JSON_TYPE : 'text/xml; charset=UTF-8';
    const cueCount = tlang ? undefined : options.captionCues?.[v];
    if (cueCount !== undefined)
      return { status: 200, contentType: type, body: renderCaptions(numberedCues(cueCount), fmt) };
    if (file) return { status: 200, contentType: type, body: readSynthetic(file) };
    return { status: 200, contentType: type, body: renderCaptions(genericCues(v, lang, asr, tlang), fmt) };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    let body: unknown;
    if (raw) {
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
    }
    const b = (body ?? {}) as Record<string, unknown>;
    const m = /^\/youtubei\/v1\/(?:navigation\/)?(player|next|browse|visitor_id|resolve_url)$/.exec(
      url.pathname,
    );
    const endpoint: Endpoint = m
      ? (m[1] as Endpoint)
      : url.pathname === '/api/timedtext'
        ? 'timedtext'
        : url.pathname === '/sw.js_data'
          ? 'sw_js_data'
          : url.pathname === '/watch'
            ? 'watch'
            : 'other';
    const client = (
      b.context as
        { client?: { clientName?: string; clientVersion?: string; visitorData?: string } } | undefined
    )?.client;
    const visitorHeader = req.headers['x-goog-visitor-id'];
    const visitorData =
      (typeof visitorHeader === 'string' && visitorHeader) ||
      (typeof client?.visitorData === 'string' && client.visitorData) ||
      undefined;
    const rec: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      endpoint,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      ...(body !== undefined ? { body } : {}),
      ...(client?.clientName ? { clientName: client.clientName } : {}),
      ...(typeof client?.clientVersion === 'string' ? { clientVersion: client.clientVersion } : {}),
      ...(visitorData ? { visitorData } : {}),
      ...(typeof b.videoId === 'string'
        ? { videoId: b.videoId }
        : endpoint === 'timedtext' && url.searchParams.get('v')
          ? { videoId: url.searchParams.get('v') as string }
          : {}),
      ...(typeof b.continuation === 'string' ? { continuation: b.continuation } : {}),
      ...(typeof b.browseId === 'string' ? { browseId: b.browseId } : {}),
      status: 0,
    };
    requests.push(rec);
    const wait = endpointLatency.get(endpoint) ?? latency;
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));

    let out: LoadedResponse;
    const failure = takeFailure(rec);
    if (failure?.kind === 'reset') {
      rec.status = -1;
      req.socket.destroy();
      return;
    }
    if (failure?.kind === 'delay') await new Promise((r) => setTimeout(r, failure.ms));
    if (failure?.kind === 'status') {
      out = {
        status: failure.status,
        contentType: JSON_TYPE,
        body: failure.body ?? JSON.stringify({ error: { code: failure.status, message: 'injected' } }),
      };
    } else if (failure?.kind === 'emptyCaptionBody') {
      out = { status: 200, contentType: 'text/html; charset=UTF-8', body: '' };
    } else if (failure?.kind === 'captcha') {
      out = {
        ...load({ file: 'youtube-transcript-api/85c8594/youtube_too_many_requests.html.static' }),
        contentType: 'text/html; charset=utf-8',
      };
    } else if (failure?.kind === 'botCheck') {
      out = load({ file: 'youtube-transcript-api/85c8594/youtube_request_blocked.innertube.json.static' });
    } else if (failure?.kind === 'differentVideo') {
      out = load({ file: 'newpipe/9730de2/stream/generatedSubtitles/generated_mock_6.json' });
    } else if (failure?.kind === 'playability') {
      out = json(playabilityAnswer(failure, 'injected'));
    } else if (failure && PLAYABILITY_KINDS[failure.kind]) {
      out = json(playabilityAnswer(PLAYABILITY_KINDS[failure.kind] as Playability, failure.kind));
    } else {
      try {
        out = platformRefusal(rec) ?? route(rec, url);
        if (failure?.kind === 'emptyCommentsPage' || failure?.kind === 'emptyPlaylistPage')
          out = { ...out, body: JSON.stringify(emptied(JSON.parse(out.body))) };
        if (rec.endpoint === 'timedtext' && mode === 'today' && isGated(url) && gatedCaptionDelay > 0)
          await new Promise((r) => setTimeout(r, gatedCaptionDelay));
      } catch (err) {
        out = { status: 500, contentType: 'text/plain', body: `fake-youtube: ${(err as Error).message}` };
      }
    }
    if (mode === 'today') out = withSessionVisitor(out, rec);
    rec.status = out.status;
    res.writeHead(out.status, {
      'content-type': out.contentType,
      'content-length': Buffer.byteLength(out.body),
    });
    res.end(out.body);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`fake-youtube: ${(err as Error).message}`);
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, host, resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`,
    requests,
    routes,
    get mode() {
      return mode;
    },
    setMode: (m) => {
      mode = m;
    },
    count: (endpoint) =>
      endpoint ? requests.filter((r) => r.endpoint === endpoint).length : requests.length,
    setLatency: (ms, endpoint) => {
      if (endpoint) endpointLatency.set(endpoint, ms);
      else latency = ms;
    },
    retireClient: (clientName) => {
      retiredClients.add(clientName);
    },
    restoreClient: (clientName) => {
      retiredClients.delete(clientName);
    },
    setGatedCaptionDelay: (ms) => {
      gatedCaptionDelay = ms;
    },
    setMinWebClientVersion: (version) => {
      minWebClientVersion = version;
    },
    setWebClientVersion: (version) => {
      webClientVersion = version;
    },
    setPlaylistShape: (playlistId, shape) => {
      playlistShapes[playlistId] = shape;
    },
    visitorDataIssued,
    failNext: (failure, match = {}) => {
      failures.push({ failure, match, left: match.times ?? 1 });
    },
    setCaptionFormat: (format) => {
      captionFormat = format;
    },
    reset: () => {
      requests.length = 0;
      failures.length = 0;
      captionFormat = undefined;
      playerCallsByVisitor.clear();
      visitorDataIssued.length = 0;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isGated, timedtext } from './captions.ts';
import { createFakeChannels } from './channels.ts';
import { createFakeSearch } from './search.ts';
import { FailureQueue, injectedAnswer } from './failures.ts';
import { fixturesDir, loadFixture, type FixtureRef, type LoadedResponse } from './fixtures.ts';
import { recordedRequest } from './request.ts';
import { JSON_TYPE, applyFieldMask, json } from './responses.ts';
import {
  KIDS_AUDIO_CLIENT,
  KIDS_AUDIO_VIDEO_ID,
  MADE_FOR_KIDS_REFUSAL,
  SPEECH_REFUSED_CAPTIONS_VIDEO_ID,
  SPEECH_VIDEO_ID,
  speechPlayer,
  videoplayback,
} from './audio.ts';
import { mergeRoutes, withSyntheticAndRecorded } from './route-setup.ts';
import { defaultRoutes, todayPlaylistShapes } from './routes.ts';
import {
  FAILED_PRECONDITION,
  builtContinuationPage,
  emptied,
  flatFirstPage,
  headerOnlyFirstPage,
  isWebFamily,
  playabilityAnswer,
  swJsData,
  todayPlayer,
  versionLess,
  type PlaylistShape,
} from './today.ts';
import { freshVisitorData, parseCommentsContinuation, parsePlaylistContinuation } from './tokens.ts';
import type { Endpoint, FakeMode, FakeYouTube, FakeYouTubeOptions, RecordedRequest } from './types.ts';

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
export {
  KIDS_AUDIO_CLIENT,
  KIDS_AUDIO_VIDEO_ID,
  MAX_PIECE_BYTES,
  SPEECH_FORMATS,
  SPEECH_LENGTH_SECONDS,
  SPEECH_VIDEO_ID,
  type SpeechAudio,
} from './audio.ts';
export * from './channels.ts';
export { searchPageOf, searchQueries, searchTypeOf, type FakeSearchType } from './search.ts';
export * from './tokens.ts';
export { isWebFamily, versionLess, type Playability, type PlaylistShape } from './today.ts';

export type * from './types.ts';

const API_KEY = 'AIzaSy-SUBX-FAKE-YOUTUBE-NOT-A-REAL-KEY';
/** A recorded media host (`https://rr1---sn-….googlevideo.com/`), plain or with JSON-escaped slashes. */
const MEDIA_HOST = /https:(\\?\/)\1[a-z0-9-]+(?:\.[a-z0-9-]+)*\.googlevideo\.com\1/g;

/**
 * The recorded media URLs pointed at this fake's `/videoplayback`: nothing a recording names makes
 * a client of the fake reach for a real host (streams other than the speech video's answer 404).
 */
export function mediaOnOrigin(body: string, origin: string): string {
  return body.replace(MEDIA_HOST, (_match, slash: string) => `${origin.replaceAll('/', slash)}${slash}`);
}
/** Endpoints where the platform checks the client version and names the caller's visitor. */
const INNERTUBE_ENDPOINTS = new Set<Endpoint>(['player', 'next', 'browse', 'search']);

/**
 * Writes `body` at most `bytesPerSecond`: slices of a fiftieth of a second, each written once the
 * time its last byte is due has come, waiting for the socket to drain. Stops when the caller hangs up.
 */
async function paced(res: ServerResponse, body: Buffer, bytesPerSecond: number): Promise<void> {
  const slice = Math.max(1024, Math.floor(bytesPerSecond / 50));
  const started = performance.now();
  for (let at = 0; at < body.length && !res.destroyed; at += slice) {
    const end = Math.min(at + slice, body.length);
    const wait = started + (end / bytesPerSecond) * 1000 - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (!res.write(body.subarray(at, end)))
      await new Promise<void>((r) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          r();
        };
        res.on('drain', done);
        res.on('close', done);
      });
  }
  res.end();
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
  let tlangRefused = options.tlangRefused === true;
  let tvCaptions = options.tvCaptions ?? 'empty';
  const initialDataShape = options.watchPageInitialData ?? 'mixed';
  let watchPages = 0;
  const failures = new FailureQueue();
  const load = (ref: FixtureRef): LoadedResponse => loadFixture(ref, dir);
  const channels = createFakeChannels({ routes, dir, load, synthetic: options.syntheticChannels });
  const search = createFakeSearch({
    dir,
    load,
    ...(options.searchPages ? { pages: options.searchPages } : {}),
  });

  const notFoundPlayer = (): LoadedResponse =>
    load({ file: 'newpipe/9730de2/stream/notAvailable/generated_mock_4.json' });
  const badContinuation = (): LoadedResponse => ({
    status: 400,
    contentType: JSON_TYPE,
    body: JSON.stringify({
      error: { code: 400, message: 'Request contains an invalid argument.', status: 'INVALID_ARGUMENT' },
    }),
  });

  /** Where the players' media URLs point: this fake, or `options.mediaOrigin`. */
  const mediaOrigin = (req: { headers: IncomingMessage['headers'] }) =>
    options.mediaOrigin ?? `http://${String(req.headers.host ?? '127.0.0.1')}`;

  function player(rec: RecordedRequest, url: URL): LoadedResponse {
    const videoId = rec.videoId ?? '';
    const client = rec.clientName ?? '';
    if (videoId === KIDS_AUDIO_VIDEO_ID && client !== KIDS_AUDIO_CLIENT && !routes.videos[videoId])
      return json(playabilityAnswer(MADE_FOR_KIDS_REFUSAL, `${client} refuses a made-for-kids video`));
    if (
      (videoId === SPEECH_VIDEO_ID ||
        videoId === KIDS_AUDIO_VIDEO_ID ||
        videoId === SPEECH_REFUSED_CAPTIONS_VIDEO_ID) &&
      !routes.videos[videoId]
    ) {
      const answer = JSON.stringify(speechPlayer(mediaOrigin(rec), client, options.speechAudio, videoId));
      return { ...json({}), body: applyFieldMask(answer, url.searchParams.get('$fields') ?? undefined) };
    }
    const v = routes.videos[videoId];
    if (!v) return notFoundPlayer();
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
    if (rec.endpoint === 'search') return search.route(body);
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
        return timedtext(url, routes, {
          captionFormat,
          captionCues: options.captionCues,
          tlangRefused,
          tvCaptionsEmpty: tvCaptions === 'empty',
        });
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
   * player response the fake would give WEB, and the watch-next answer as `ytInitialData` (in either
   * of the platform's two shapes), so the benchmarks can run them against this fake. Our client never
   * fetches HTML.
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
    const next = video?.next ? load(video.next) : undefined;
    // like the platform since October 2026: about one page in five carries ytInitialData as a JSON
    // script element instead of the assignment
    watchPages++;
    const asScript =
      initialDataShape === 'json-script' || (initialDataShape === 'mixed' && watchPages % 5 === 0);
    const initialData = !next
      ? ''
      : asScript
        ? `<script id="yt-initial-data" type="application/json">${next.body}</script>`
        : `<script>var ytInitialData = ${next.body};</script>`;
    const cfg = JSON.stringify({ INNERTUBE_API_KEY: API_KEY, INNERTUBE_CLIENT_VERSION: webClientVersion });
    const html =
      '<!DOCTYPE html><html><head><title>SYNTHETIC watch page of @subx/testing fake-youtube</title></head><body>' +
      `<script>ytcfg.set(${cfg});</script>` +
      (player ? `<script>var ytInitialPlayerResponse = ${player.body};</script>` : '') +
      initialData +
      '</body></html>';
    return { status: 200, contentType: 'text/html; charset=utf-8', body: html };
  }

  /** What the platform does before it looks at the content: version rot and per-session quotas. */
  function platformRefusal(rec: RecordedRequest): LoadedResponse | undefined {
    const innertube = INNERTUBE_ENDPOINTS.has(rec.endpoint);
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
    const innertube = INNERTUBE_ENDPOINTS.has(rec.endpoint);
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

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const { rec, url } = recordedRequest(req, Buffer.concat(chunks).toString('utf8'));
    requests.push(rec);
    const wait = endpointLatency.get(rec.endpoint) ?? latency;
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));

    let out: LoadedResponse;
    const failure = failures.take(rec);
    if (failure?.kind === 'reset') {
      rec.status = -1;
      req.socket.destroy();
      return;
    }
    if (failure?.kind === 'delay') await new Promise((r) => setTimeout(r, failure.ms));
    if (rec.endpoint === 'videoplayback' && !failure) {
      const range = req.headers.range;
      const startMs = performance.now();
      const a = videoplayback(url, typeof range === 'string' ? range : undefined, options.speechAudio);
      rec.status = a.status;
      res.writeHead(a.status, { ...a.headers, 'content-length': a.body.length });
      if (options.audioBytesPerSecond) await paced(res, a.body, options.audioBytesPerSecond);
      else res.end(a.body);
      options.onAudioServed?.({ bytes: a.body.length, startMs, endMs: performance.now() });
      return;
    }
    const injected = injectedAnswer(failure, load);
    if (injected) {
      out = injected;
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
    // Stream URLs live in player answers: those point at this fake; every other page (search, browse,
    // watch) stays byte for byte as recorded.
    if (rec.endpoint === 'player' && out.body.includes('googlevideo.com'))
      out = { ...out, body: mediaOnOrigin(out.body, mediaOrigin(req)) };
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
      failures.push(failure, match);
    },
    setCaptionFormat: (format) => {
      captionFormat = format;
    },
    setTlangRefused: (refused) => {
      tlangRefused = refused;
    },
    setTvCaptions: (m) => {
      tvCaptions = m;
    },
    reset: () => {
      requests.length = 0;
      failures.clear();
      captionFormat = undefined;
      tlangRefused = options.tlangRefused === true;
      tvCaptions = options.tvCaptions ?? 'empty';
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

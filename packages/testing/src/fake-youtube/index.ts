import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fixturesDir, loadFixture, readSynthetic, type FixtureRef, type LoadedResponse } from './fixtures.ts';
import { RECORDED_CONTINUATIONS, defaultRoutes, playlistIds, videoIds, type RouteTable } from './routes.ts';
import { generateComments, generatePlaylist, genericCues, renderCaptions } from './synthetic.ts';

/**
 * A fake YouTube on 127.0.0.1:0 that replays the recorded responses of packages/testing/fixtures-recorded (and synthetic
 * caption bodies / comment pages / playlists where nothing was recorded). Point YOUTUBE_BASE_URL at `url`.
 */

export { videoIds, playlistIds, defaultRoutes, type RouteTable, type VideoRoute } from './routes.ts';
export { fixturesDir, loadFixture, extractHtmlVar, readSynthetic, type FixtureRef } from './fixtures.ts';
export * from './synthetic.ts';

export type Endpoint = 'player' | 'next' | 'browse' | 'timedtext' | 'other';

export interface RecordedRequest {
  method: string;
  path: string;
  endpoint: Endpoint;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  body?: unknown;
  clientName?: string;
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
  | { kind: 'differentVideo' };

export interface FailureMatch {
  endpoint?: Endpoint;
  /** How many matching requests fail (default 1). */
  times?: number;
}

export interface FakeYouTubeOptions {
  /** Merged over the default routing table. */
  routes?: Partial<RouteTable>;
  latencyMs?: number;
  fixturesDir?: string;
}

export interface FakeYouTube {
  url: string;
  requests: RecordedRequest[];
  /** Requests of one endpoint (or all). */
  count(endpoint?: Endpoint): number;
  setLatency(ms: number): void;
  failNext(failure: Failure, match?: FailureMatch): void;
  /** Serve every caption body in this format whatever `fmt` asks (undefined: honour `fmt`). */
  setCaptionFormat(format: 'json3' | 'srv3' | 'srv1' | undefined): void;
  /** Forget recorded requests and pending failures. */
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
    player: {
      '*': {
        inline: {
          playabilityStatus: { status: 'OK' },
          videoDetails: { videoId: videoIds.syntheticComments, title: 'synthetic comments' },
        },
      },
    },
    next: { inline: comments.next },
    note: 'synthetic comments: 3 pages, replies behind continuations (2 per page) and inline subThreads',
  };
  for (const [token, page] of comments.pages) routes.continuations[token] ??= { inline: page };
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
  let latency = options.latencyMs ?? 0;
  let captionFormat: 'json3' | 'srv3' | 'srv1' | undefined;
  const failures: { failure: Failure; endpoint?: Endpoint; left: number }[] = [];
  const load = (ref: FixtureRef): LoadedResponse => loadFixture(ref, dir);

  const takeFailure = (endpoint: Endpoint): Failure | undefined => {
    const i = failures.findIndex((f) => f.endpoint === undefined || f.endpoint === endpoint);
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

  function route(rec: RecordedRequest, url: URL): LoadedResponse {
    const body = (rec.body ?? {}) as Record<string, unknown>;
    switch (rec.endpoint) {
      case 'player': {
        const v = routes.videos[rec.videoId ?? ''];
        if (!v) return notFoundPlayer();
        const fields = url.searchParams.get('$fields') ?? undefined;
        const ref =
          (fields && v.microformat) ||
          v.player[rec.clientName ?? ''] ||
          v.player['*'] ||
          Object.values(v.player)[0];
        if (!ref) return notFoundPlayer();
        const res = load(ref);
        return { ...res, body: applyFieldMask(res.body, fields) };
      }
      case 'next': {
        if (typeof body.continuation === 'string') {
          const ref = routes.continuations[body.continuation];
          return ref ? load(ref) : badContinuation();
        }
        const v = routes.videos[rec.videoId ?? ''];
        if (!v?.next)
          return {
            status: 200,
            contentType: JSON_TYPE,
            body: JSON.stringify({ responseContext: {}, trackingParams: 'fake' }),
          };
        return load(v.next);
      }
      case 'browse': {
        if (typeof body.continuation === 'string') {
          const ref = routes.continuations[body.continuation];
          return ref ? load(ref) : badContinuation();
        }
        const id = (rec.browseId ?? '').replace(/^VL/, '');
        const ref = routes.playlists[id] ?? {
          file: 'newpipe/62b3c3b/playlist/notAvailable/generated_mock_3.json',
        };
        return load(ref);
      }
      case 'timedtext':
        return timedtext(url);
      default:
        return { status: 404, contentType: 'text/plain', body: 'not found' };
    }
  }

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
    const m = /^\/youtubei\/v1\/(player|next|browse)$/.exec(url.pathname);
    const endpoint: Endpoint = m
      ? (m[1] as Endpoint)
      : url.pathname === '/api/timedtext'
        ? 'timedtext'
        : 'other';
    const client = (b.context as { client?: { clientName?: string } } | undefined)?.client;
    const rec: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      endpoint,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      ...(body !== undefined ? { body } : {}),
      ...(client?.clientName ? { clientName: client.clientName } : {}),
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
    if (latency > 0) await new Promise((r) => setTimeout(r, latency));

    let out: LoadedResponse;
    const failure = takeFailure(endpoint);
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
    } else {
      try {
        out = route(rec, url);
      } catch (err) {
        out = { status: 500, contentType: 'text/plain', body: `fake-youtube: ${(err as Error).message}` };
      }
    }
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
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    routes,
    count: (endpoint) =>
      endpoint ? requests.filter((r) => r.endpoint === endpoint).length : requests.length,
    setLatency: (ms) => {
      latency = ms;
    },
    failNext: (failure, match = {}) => {
      failures.push({
        failure,
        ...(match.endpoint ? { endpoint: match.endpoint } : {}),
        left: match.times ?? 1,
      });
    },
    setCaptionFormat: (format) => {
      captionFormat = format;
    },
    reset: () => {
      requests.length = 0;
      failures.length = 0;
      captionFormat = undefined;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

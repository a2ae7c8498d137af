import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback fake of the bgutil PO-token provider's HTTP server (Brainicism/bgutil-ytdlp-pot-provider,
 * server/src/routes/*.ts), the one yt-dlp users run on port 4416:
 * - `POST /get_pot` `{content_binding?, proxy?, bypass_cache?, source_address?, disable_tls_verification?,
 *   challenge?, innertube_context?}` → `{poToken, contentBinding, expiresAt}`; a token is cached per content
 *   binding until it expires (TTL 6 h like the provider's default) unless `bypass_cache`; without a content
 *   binding the provider makes a visitorData and binds to it. The deprecated `data_sync_id`, `visitor_data`
 *   and `disable_innertube` answer 400 `{error}`, as there.
 * - `GET /ping` → `{server_uptime, version}`; `POST /invalidate_caches` → 204.
 * The tokens are random and SYNTHETIC: only a fake YouTube accepts them (any non-empty `pot`).
 */

export interface PoTokenRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body?: unknown;
  status: number;
}

export type PoTokenFailure =
  { kind: 'status'; status: number; body?: string } | { kind: 'delay'; ms: number };

export interface FakePoTokenProviderOptions {
  latencyMs?: number;
  /** Token lifetime (the provider's TOKEN_TTL, default 6 hours). */
  ttlHours?: number;
  /** What /ping reports. */
  version?: string;
}

export interface IssuedToken {
  poToken: string;
  contentBinding: string;
  expiresAt: string;
}

export interface FakePoTokenProvider {
  url: string;
  requests: PoTokenRequest[];
  /** Requests to one path (or all). */
  count(path?: string): number;
  /** Every token minted (cache hits are not minted again). */
  issued: IssuedToken[];
  setLatency(ms: number): void;
  /** The next matching requests (default: any path, once) fail this way. */
  failNext(failure: PoTokenFailure, match?: { path?: string; times?: number }): void;
  reset(): void;
  close(): Promise<void>;
}

const JSON_TYPE = 'application/json; charset=utf-8';
const DEPRECATED: Record<string, string> = {
  data_sync_id: 'data_sync_id is deprecated, use content_binding instead',
  visitor_data: 'visitor_data is deprecated, use content_binding instead',
  disable_innertube: "disable_innertube is deprecated because the /Create endpoint doesn't work anymore",
};
/** Bodies above this are refused (the provider's express.json default limit is 100 kB). */
const MAX_BODY = 100 * 1024;

export async function startFakePoTokenProvider(
  options: FakePoTokenProviderOptions = {},
): Promise<FakePoTokenProvider> {
  const started = Date.now();
  const ttlMs = (options.ttlHours ?? 6) * 3600_000;
  const version = options.version ?? '1.2.2-subx-fake';
  let latency = options.latencyMs ?? 0;
  const requests: PoTokenRequest[] = [];
  const issued: IssuedToken[] = [];
  const cache = new Map<string, IssuedToken>();
  const failures: { failure: PoTokenFailure; path?: string; left: number }[] = [];

  const takeFailure = (path: string): PoTokenFailure | undefined => {
    const i = failures.findIndex((f) => f.path === undefined || f.path === path);
    if (i < 0) return undefined;
    const f = failures[i] as (typeof failures)[number];
    if (--f.left <= 0) failures.splice(i, 1);
    return f.failure;
  };

  function mint(body: Record<string, unknown>): { status: number; value?: unknown } {
    for (const [field, error] of Object.entries(DEPRECATED))
      if (body[field]) return { status: 400, value: { error } };
    const binding =
      typeof body.content_binding === 'string' && body.content_binding
        ? body.content_binding
        : `synthetic-visitor-${randomBytes(8).toString('base64url')}`;
    const now = Date.now();
    const hit = cache.get(binding);
    if (hit && !body.bypass_cache && Date.parse(hit.expiresAt) > now) return { status: 200, value: hit };
    const token: IssuedToken = {
      poToken: randomBytes(96).toString('base64url'),
      contentBinding: binding,
      expiresAt: new Date(now + ttlMs).toISOString(),
    };
    cache.set(binding, token);
    issued.push(token);
    return { status: 200, value: token };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size <= MAX_BODY) chunks.push(c as Buffer);
    }
    const raw = Buffer.concat(chunks).toString('utf8');
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const rec: PoTokenRequest = { method: req.method ?? 'GET', path, headers: req.headers, status: 0 };
    requests.push(rec);
    const send = (status: number, value?: unknown, type = JSON_TYPE): void => {
      rec.status = status;
      const text = value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    if (latency > 0) await new Promise((r) => setTimeout(r, latency));
    const failure = takeFailure(path);
    if (failure?.kind === 'delay') await new Promise((r) => setTimeout(r, failure.ms));
    if (failure?.kind === 'status')
      return send(failure.status, failure.body ?? { error: 'injected failure' });
    if (size > MAX_BODY) return send(413, { error: 'request entity too large' });

    if (req.method === 'GET' && path === '/ping')
      return send(200, { server_uptime: (Date.now() - started) / 1000, version });
    if (req.method === 'POST' && path === '/invalidate_caches') {
      cache.clear();
      return send(204);
    }
    if (req.method === 'POST' && path === '/get_pot') {
      let body: unknown = {};
      if (raw) {
        try {
          body = JSON.parse(raw);
        } catch {
          return send(400, { error: 'request body is not JSON' });
        }
      }
      rec.body = body;
      if (!body || typeof body !== 'object' || Array.isArray(body))
        return send(400, { error: 'request body must be a JSON object' });
      const out = mint(body as Record<string, unknown>);
      return send(out.status, out.value);
    }
    return send(404, `Cannot ${req.method ?? 'GET'} ${path}`, 'text/html; charset=utf-8');
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': JSON_TYPE });
      res.end(JSON.stringify({ error: (err as Error).message }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    issued,
    count: (path) => (path ? requests.filter((r) => r.path === path).length : requests.length),
    setLatency: (ms) => {
      latency = ms;
    },
    failNext: (failure, match = {}) => {
      failures.push({ failure, ...(match.path ? { path: match.path } : {}), left: match.times ?? 1 });
    },
    reset: () => {
      requests.length = 0;
      failures.length = 0;
      issued.length = 0;
      cache.clear();
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

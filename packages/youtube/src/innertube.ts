/**
 * InnerTube plumbing: one POST to /youtubei/v1/<endpoint> as a given client on a visitor session,
 * with the client's context and headers, the session's visitor data adopted from each answer, the
 * session retired when the platform blocks it, and the WEB client version healed from /sw.js_data.
 */
import { AppError, Errors } from '@subx/errors';
import { isWebFamily, type InnertubeClient } from './clients.ts';
import type { ClientIdentities, YouTubeClientConfig } from './config.ts';
import { at, str } from './parse/json.ts';
import { classifyPlayability } from './parse/player.ts';
import { parseJson } from './requests.ts';
import { SessionPool, type Session } from './sessions.ts';
import { UpstreamHttpError, type Transport } from './transport.ts';
import type { Logger } from './types.ts';

export type Endpoint = 'player' | 'next' | 'browse' | 'resolve_url' | 'search';

/** The session an operation runs on; replaced in place when the platform blocks it. */
export interface Lease {
  s: Session;
}

export interface PostOptions {
  lease: Lease;
  /** Extra query (field masks). */
  query?: string;
  /** For /player: a 200 whose playability says "blocked" throws, so it counts (and retries) as a block. */
  playerOf?: string;
}

/** The watch page, sent as Referer where the platform fingerprints requests. */
export const REFERER = 'https://www.youtube.com/';

export class Innertube {
  /** Replaced (never mutated) when the client identities file changes. */
  #config: YouTubeClientConfig;
  readonly transport: Transport;
  readonly sessions: SessionPool;
  readonly #logger: Logger | undefined;
  /** Client contexts; the WEB version is healed at run time from /sw.js_data. */
  #clients: Record<string, InnertubeClient>;
  #versionCheckedAt: number;
  #versionRefresh: Promise<void> | undefined;

  constructor(config: YouTubeClientConfig, transport: Transport, logger: Logger | undefined) {
    this.#config = config;
    this.transport = transport;
    this.#logger = logger;
    this.#clients = structuredClone(config.clients);
    this.#versionCheckedAt = Date.now();
    this.sessions = new SessionPool({
      config: config.sessions,
      proxies: config.proxies.length,
      bootstrap: (s) => this.#freshVisitor(s),
      logger,
    });
  }

  get config(): YouTubeClientConfig {
    return this.#config;
  }

  /**
   * Switches to new client identities (the identities file changed): requests from now on use them;
   * the adaptive ladder keeps its record per name and version, so a new version starts clean.
   */
  useIdentities(identities: ClientIdentities): void {
    this.#clients = structuredClone(identities.clients);
    this.#config = {
      ...this.#config,
      clients: identities.clients,
      captionClients: identities.captionClients,
      webClient: identities.webClient,
    };
  }

  client(name: string): InnertubeClient {
    return this.#clients[name] as InnertubeClient;
  }

  /** The version a client name sends now (undefined for a name that is no client). */
  clientVersion(name: string): string | undefined {
    return this.#clients[name]?.version;
  }

  lease(): Lease {
    return { s: this.sessions.acquire() };
  }

  /** Fresh visitor data for a session, from /youtubei/v1/visitor_id or /sw.js_data. */
  async #freshVisitor(s: Session): Promise<string | undefined> {
    if (this.config.sessions.bootstrap === 'sw_js_data') return (await this.#swJsData(s.proxy)).visitorData;
    const res = await this.transport.request({
      method: 'POST',
      url: '/youtubei/v1/visitor_id?prettyPrint=false',
      endpoint: 'visitor_id',
      client: this.config.webClient,
      proxy: s.proxy,
      coalesceKey: `visitor_id ${s.id}`,
      headers: this.#headers(this.client(this.config.webClient), undefined),
      body: JSON.stringify({ context: this.#context(this.client(this.config.webClient), undefined) }),
      inspect: (r) => str(at(parseJson(r.text, 'visitor_id'), 'responseContext', 'visitorData')),
    });
    return res.parsed as string | undefined;
  }

  /** The live WEB client version and a visitorData, as YouTube.js reads them (`device_info[16]`, `[13]`). */
  async #swJsData(proxy: number): Promise<{ version?: string; visitorData?: string }> {
    const res = await this.transport.request({
      method: 'GET',
      url: '/sw.js_data',
      endpoint: 'sw_js_data',
      client: 'none',
      proxy,
      headers: { 'User-Agent': this.client(this.config.webClient).userAgent, Referer: `${REFERER}sw.js` },
      inspect: (r) => {
        const body = r.text.replace(/^\)\]\}'\s*/, '');
        const data = parseJson(body, 'sw.js_data');
        const info = at(data, 0, 2, 0, 0);
        if (!Array.isArray(info))
          throw Errors.upstreamError('The platform changed the shape of /sw.js_data.');
        const version = str(info[16]);
        const visitorData = str(info[13]);
        return {
          ...(version && /^\d+\.\d{8}\.\d+\.\d+$/.test(version) ? { version } : {}),
          ...(visitorData ? { visitorData } : {}),
        };
      },
    });
    return res.parsed as { version?: string; visitorData?: string };
  }

  /** Reads the live WEB version (at most one refresh in flight); never throws. */
  #refreshVersion(): Promise<void> {
    this.#versionRefresh ??= this.#swJsData(0)
      .then(({ version }) => {
        this.#versionCheckedAt = Date.now();
        const web = this.client(this.config.webClient);
        if (version && version !== web.version) {
          this.#logger?.warn({ from: web.version, to: version }, 'youtube WEB client version healed');
          web.version = version;
        }
      })
      .catch((err: unknown) => {
        this.#logger?.warn({ err: (err as Error).message }, 'reading the live WEB client version failed');
      })
      .finally(() => {
        this.#versionRefresh = undefined;
      });
    return this.#versionRefresh;
  }

  #context(c: InnertubeClient, visitorData: string | undefined): Record<string, unknown> {
    return {
      client: {
        clientName: c.name,
        clientVersion: c.version,
        hl: this.config.hl,
        gl: this.config.gl,
        timeZone: 'UTC',
        utcOffsetMinutes: 0,
        ...(visitorData ? { visitorData } : {}),
        ...c.extra,
      },
    };
  }

  #headers(c: InnertubeClient, visitorData: string | undefined): Record<string, string> {
    return {
      'X-YouTube-Client-Name': String(c.id),
      'X-YouTube-Client-Version': c.version,
      'User-Agent': c.userAgent,
      Origin: 'https://www.youtube.com',
      ...(visitorData ? { 'X-Goog-Visitor-Id': visitorData } : {}),
    };
  }

  /**
   * One InnerTube call as `clientName` on the lease's session. A 400 FAILED_PRECONDITION of a WEB-family
   * client (a retired version) reads the live version from /sw.js_data and retries once.
   */
  async post(
    endpoint: Endpoint,
    clientName: string,
    body: Record<string, unknown>,
    opts: PostOptions,
    healed = false,
  ): Promise<unknown> {
    const c = this.client(clientName);
    // the TV client's version is a line of its own (5.x), not the one /sw.js_data tells WEB
    const web = isWebFamily(c) && !c.name.startsWith('TVHTML5');
    if (
      web &&
      this.config.versionRefreshMs > 0 &&
      Date.now() - this.#versionCheckedAt > this.config.versionRefreshMs
    ) {
      void this.#refreshVersion();
    }
    const session = opts.lease.s;
    const query = opts.query ?? '';
    try {
      const res = await this.transport.request({
        method: 'POST',
        url: `/youtubei/v1/${endpoint === 'resolve_url' ? 'navigation/resolve_url' : endpoint}?prettyPrint=false${query}`,
        endpoint,
        client: clientName,
        proxy: session.proxy,
        onProxyMoved: (p) => {
          session.proxy = p;
        },
        // concurrent identical calls share one answer whatever session asked
        coalesceKey: `${endpoint}${query} ${clientName} ${c.version} ${JSON.stringify(body)}`,
        headers: this.#headers(c, session.visitorData),
        body: JSON.stringify({ context: this.#context(c, session.visitorData), ...body }),
        inspect: (r) => {
          const json = parseJson(r.text, endpoint);
          if (opts.playerOf !== undefined) {
            const verdict = classifyPlayability(json, opts.playerOf);
            if (!verdict.ok && verdict.error.code === 'UPSTREAM_BLOCKED') throw verdict.error;
          }
          return json;
        },
      });
      this.sessions.adopt(session, str(at(res.parsed, 'responseContext', 'visitorData')));
      return res.parsed;
    } catch (err) {
      if (err instanceof AppError && err.code === 'UPSTREAM_BLOCKED' && err.reason !== 'cooling_down') {
        // this visitor (and its egress) is what the platform is counting: the operation moves on
        opts.lease.s = this.sessions.retire(session, err.reason ?? 'blocked');
      }
      const http = err instanceof AppError ? err.cause : undefined;
      if (
        !healed &&
        web &&
        http instanceof UpstreamHttpError &&
        http.status === 400 &&
        http.apiStatus === 'FAILED_PRECONDITION'
      ) {
        this.#logger?.warn({ client: clientName, version: c.version }, 'WEB client version refused; healing');
        await this.#refreshVersion();
        return this.post(endpoint, clientName, body, opts, true);
      }
      throw err;
    }
  }
}

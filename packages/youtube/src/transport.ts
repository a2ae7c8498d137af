import { AppError, Errors } from '@subx/errors';
import { ProxyAgent, fetch as undiciFetch } from 'undici';
import type { YouTubeClientConfig } from './config.ts';
import type { UpstreamEndpoint, UpstreamObserver, UpstreamOutcome } from './observer.ts';
import type { FetchLike, Logger } from './types.ts';

/**
 * The one door to the platform. Re-bases every URL onto the configured base URL, applies per-request
 * timeouts, retries network errors and 5xx with jittered backoff, rotates proxies on a block, sends the EU
 * consent cookie and coalesces identical in-flight requests into one upstream call.
 */

export interface TransportRequest {
  method: 'GET' | 'POST';
  /** A path ("/youtubei/v1/player?...") or an absolute platform URL (re-based). */
  url: string;
  headers?: Record<string, string>;
  body?: string;
  /** For the outcome report: which endpoint, as which client ('none' when not as a client). */
  endpoint: UpstreamEndpoint;
  client: string;
}

export interface TransportResponse {
  status: number;
  text: string;
  contentType: string;
}

export interface TransportDeps {
  fetch?: FetchLike | undefined;
  logger?: Logger | undefined;
  sleep?: ((ms: number) => Promise<void>) | undefined;
  random?: (() => number) | undefined;
  /** Told the outcome of every request sent. */
  observer?: UpstreamObserver | undefined;
}

/** Hosts whose absolute URLs we follow (re-based); anything else is refused. */
const PLATFORM_HOST =
  /(^|\.)(youtube\.com|youtube-nocookie\.com|googleapis\.com|googlevideo\.com|youtu\.be)$/i;

export function rebase(baseUrl: string, url: string): string {
  if (!/^https?:\/\//i.test(url)) return baseUrl + (url.startsWith('/') ? url : `/${url}`);
  const u = new URL(url);
  const base = new URL(baseUrl);
  if (u.origin !== base.origin && !PLATFORM_HOST.test(u.hostname)) {
    throw Errors.upstreamError(`Refusing to follow a non-platform URL (${u.hostname}).`);
  }
  return baseUrl + u.pathname + u.search;
}

class RetryableNetworkError extends Error {}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class Transport {
  readonly #config: YouTubeClientConfig;
  readonly #fetch: FetchLike;
  readonly #logger: Logger | undefined;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #random: () => number;
  readonly #observer: UpstreamObserver | undefined;
  readonly #agents: ProxyAgent[];
  #proxyIndex = 0;
  readonly #inflight = new Map<string, Promise<TransportResponse>>();
  /** Upstream calls actually made (coalesced callers count once). */
  upstreamCalls = 0;

  constructor(config: YouTubeClientConfig, deps: TransportDeps = {}) {
    this.#config = config;
    this.#agents = config.proxies.map((p) => new ProxyAgent(p));
    // With proxies the dispatcher must come from the same undici as the fetch (mixing versions breaks).
    this.#fetch =
      deps.fetch ??
      (this.#agents.length > 0 ? (undiciFetch as unknown as FetchLike) : (globalThis.fetch as FetchLike));
    this.#logger = deps.logger;
    this.#sleep = deps.sleep ?? defaultSleep;
    this.#random = deps.random ?? Math.random;
    this.#observer = deps.observer;
  }

  /** Identical concurrent requests (method, URL, body) share one upstream call. */
  request(req: TransportRequest): Promise<TransportResponse> {
    const url = rebase(this.#config.baseUrl, req.url);
    const key = `${req.method} ${url} ${req.body ?? ''}`;
    const pending = this.#inflight.get(key);
    if (pending) return pending;
    const p = this.#withRetries({ ...req, url }).finally(() => this.#inflight.delete(key));
    this.#inflight.set(key, p);
    return p;
  }

  async close(): Promise<void> {
    await Promise.all(this.#agents.map((a) => a.close()));
  }

  async #withRetries(req: TransportRequest): Promise<TransportResponse> {
    let attempt = 0;
    let blockedRotations = 0;
    for (;;) {
      try {
        return await this.#once(req);
      } catch (err) {
        if (err instanceof RetryableNetworkError && attempt < this.#config.retries) {
          attempt++;
          // full jitter: uniform in [0, base * 2^attempt)
          const delay = Math.floor(this.#random() * this.#config.retryBaseMs * 2 ** attempt);
          this.#logger?.warn({ attempt, delay, reason: err.message }, 'youtube request failed; retrying');
          await this.#sleep(delay);
          continue;
        }
        if (
          err instanceof AppError &&
          err.code === 'UPSTREAM_BLOCKED' &&
          this.#agents.length > 1 &&
          blockedRotations < this.#agents.length - 1
        ) {
          blockedRotations++;
          this.rotateProxy();
          this.#logger?.warn(
            { reason: err.reason, proxy: this.#proxyIndex },
            'youtube blocked us; rotating proxy',
          );
          continue;
        }
        if (err instanceof RetryableNetworkError) {
          throw Errors.upstreamError(`The video platform failed: ${err.message}`, err.cause);
        }
        throw err;
      }
    }
  }

  /** Moves to the next proxy of the pool (also used by callers that detect a block in a 200 body). */
  rotateProxy(): boolean {
    if (this.#agents.length < 2) return false;
    this.#proxyIndex = (this.#proxyIndex + 1) % this.#agents.length;
    return true;
  }

  get canRotate(): boolean {
    return this.#agents.length > 1;
  }

  async #once(req: TransportRequest): Promise<TransportResponse> {
    const started = performance.now();
    try {
      const res = await this.#send(req);
      this.#report(req, 'ok', started);
      return res;
    } catch (err) {
      this.#report(req, outcomeOf(err), started);
      throw err;
    }
  }

  #report(req: TransportRequest, outcome: UpstreamOutcome, started: number): void {
    try {
      this.#observer?.call({
        client: req.client,
        endpoint: req.endpoint,
        outcome,
        durationMs: performance.now() - started,
      });
    } catch (err) {
      this.#logger?.warn({ err }, 'upstream observer failed');
    }
  }

  async #send(req: TransportRequest): Promise<TransportResponse> {
    const headers: Record<string, string> = {
      'Accept-Language': 'en-US,en;q=0.9',
      // "accept all" consent, so EU egress never lands on consent.youtube.com
      Cookie: 'SOCS=CAI; PREF=hl=en&tz=UTC',
      ...req.headers,
    };
    if (req.body !== undefined) headers['Content-Type'] = 'application/json';
    const signal = AbortSignal.timeout(this.#config.timeoutMs);
    const agent = this.#agents[this.#proxyIndex];
    this.upstreamCalls++;
    let res: Response;
    try {
      res = await this.#fetch(req.url, {
        method: req.method,
        headers,
        ...(req.body !== undefined ? { body: req.body } : {}),
        signal,
        redirect: 'follow',
        ...(agent ? { dispatcher: agent } : {}),
      });
    } catch (err) {
      if (signal.aborted) throw Errors.upstreamTimeout(undefined, err);
      throw new RetryableNetworkError((err as Error).message ?? 'network error', { cause: err });
    }
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      if (signal.aborted) throw Errors.upstreamTimeout(undefined, err);
      throw new RetryableNetworkError('connection dropped while reading the body', { cause: err });
    }
    const contentType = res.headers.get('content-type') ?? '';
    const landed = res.url || req.url;
    if (
      /google\.com\/sorry|consent\.youtube\.com/.test(landed) ||
      (contentType.includes('html') && /g-recaptcha|id="captcha-form"/.test(text))
    ) {
      throw Errors.upstreamBlocked('captcha', 'The platform answered with a captcha page.');
    }
    if (res.status === 429)
      throw Errors.upstreamBlocked('http_429', 'The platform answered HTTP 429 (too many requests).');
    if (res.status >= 500) throw new RetryableNetworkError(`HTTP ${res.status}`);
    if (res.status >= 400) {
      throw Errors.upstreamError(`The video platform answered HTTP ${res.status}: ${errorMessage(text)}`);
    }
    return { status: res.status, text, contentType };
  }
}

/** The outcome class of a failed request (see observer.ts). */
export function outcomeOf(err: unknown): UpstreamOutcome {
  if (!(err instanceof AppError)) return 'error';
  if (err.code === 'UPSTREAM_TIMEOUT') return 'timeout';
  if (err.code === 'UPSTREAM_BLOCKED') {
    return err.reason === 'http_429' || err.reason === 'rate_limited' ? 'rate_limited' : 'blocked';
  }
  return 'error';
}

function errorMessage(body: string): string {
  try {
    const j = JSON.parse(body) as { error?: { message?: string; status?: string } };
    return [j.error?.status, j.error?.message].filter(Boolean).join(' ') || 'no details';
  } catch {
    return 'no details';
  }
}

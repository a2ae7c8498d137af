import { AppError, Errors } from '@subx/errors';
import { backoffDelay } from '@subx/ports';
import { ProxyAgent, fetch as undiciFetch } from 'undici';
import type { CircuitBreaker } from './breaker.ts';
import { EgressPacer, PacingWaitTooLongError } from './egress/pacing.ts';
import { EgressQuarantine } from './egress/quarantine.ts';
import { pacingApplies, type YouTubeClientConfig } from './config.ts';
import {
  isAnswer,
  isRefusal,
  type UpstreamEndpoint,
  type UpstreamObserver,
  type UpstreamOutcome,
} from './observer.ts';
import { networkCauseOf } from './network-cause.ts';
import type { FetchLike, Logger } from './types.ts';

/** The longest wait before a retry, whatever the base and the attempt. */
const RETRY_MAX_DELAY_MS = 60_000;

/**
 * The one door to the platform. Re-bases every URL onto the configured base URL, asks the circuit breaker
 * first, applies per-request timeouts and per-endpoint body caps, retries network errors and 5xx with
 * jittered backoff, moves to another proxy (or a fresh connection through a single rotating proxy) on a
 * block, sends the EU consent cookie, coalesces identical in-flight requests into one upstream call and
 * reports every call's outcome to the observer.
 */

export interface TransportRequest {
  method: 'GET' | 'POST';
  /** A path ("/youtubei/v1/player?...") or an absolute platform URL (re-based). */
  url: string;
  headers?: Record<string, string>;
  body?: string;
  /** For the outcome report and the body cap: which endpoint, as which client ('none' when not as a client). */
  endpoint: UpstreamEndpoint;
  client: string;
  /** Proxy of the calling session (index into the pool). */
  proxy?: number;
  /** Called when a block moved the request to another proxy, so the session follows. */
  onProxyMoved?: (proxy: number) => void;
  /**
   * Requests with the same key share one upstream call while in flight. Defaults to method, URL and
   * body; callers leave session-specific parts (visitor data) out so concurrent callers still share.
   */
  coalesceKey?: string;
  /**
   * Reads the answer before its outcome is reported: returns the parsed value (kept in `parsed`) or throws
   * an AppError, so that a 200 that says "bot check" counts as blocked, not ok.
   */
  inspect?: (res: TransportResponse) => unknown;
}

export interface TransportResponse {
  status: number;
  text: string;
  contentType: string;
  /** What `inspect` returned. */
  parsed?: unknown;
}

export interface TransportDeps {
  fetch?: FetchLike | undefined;
  logger?: Logger | undefined;
  sleep?: ((ms: number) => Promise<void>) | undefined;
  random?: (() => number) | undefined;
  /** Told the outcome of every request sent. */
  observer?: UpstreamObserver | undefined;
  breaker?: CircuitBreaker | undefined;
  /** The version of a client identity by name (for the outcome reports); the client's current one. */
  clientVersion?: ((client: string) => string | undefined) | undefined;
  /** Clock of the egress quarantine and pacing (tests inject one). */
  clock?: { now(): number } | undefined;
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

class RetryableNetworkError extends Error {
  /** Set when no answer came at all (not a 5xx): why, for logs, the error and the counter. */
  readonly network: ReturnType<typeof networkCauseOf> | undefined;

  constructor(message: string, options?: { cause?: unknown; network?: ReturnType<typeof networkCauseOf> }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.network = options?.network;
  }
}

/** The HTTP status and the API's error status of a 4xx answer (kept as the cause of the UPSTREAM_ERROR). */
export class UpstreamHttpError extends Error {
  readonly status: number;
  readonly apiStatus: string | undefined;

  constructor(status: number, apiStatus: string | undefined) {
    super(`HTTP ${status}${apiStatus ? ` ${apiStatus}` : ''}`);
    this.status = status;
    this.apiStatus = apiStatus;
  }
}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class Transport {
  readonly #config: YouTubeClientConfig;
  readonly #fetch: FetchLike;
  readonly #logger: Logger | undefined;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #random: () => number;
  readonly #observer: UpstreamObserver | undefined;
  readonly #clientVersion: (client: string) => string;
  readonly #breaker: CircuitBreaker | undefined;
  readonly #agents: ProxyAgent[];
  readonly #quarantine: EgressQuarantine;
  /** Undefined when requests are not paced (a fake or a replay platform, or YOUTUBE_PACING=off). */
  readonly #pacer: EgressPacer | undefined;
  readonly #inflight = new Map<string, Promise<TransportResponse>>();
  /** Upstream calls actually made (coalesced callers count once). */
  upstreamCalls = 0;

  constructor(config: YouTubeClientConfig, deps: TransportDeps = {}) {
    this.#config = config;
    this.#agents = config.proxies.map((p) => new ProxyAgent(p));
    this.#quarantine = new EgressQuarantine({
      count: this.#agents.length > 1 ? this.#agents.length : 0,
      quarantineMs: config.egressQuarantineMs,
      clock: deps.clock,
    });
    this.#pacer = pacingApplies(config)
      ? new EgressPacer({
          count: Math.max(1, this.#agents.length),
          perMinute: config.pacing.perMinute,
          burst: config.pacing.burst,
          maxWaitMs: config.pacing.maxWaitMs,
          clock: deps.clock,
          sleep: deps.sleep,
          // the address is what the platform counts: one budget per egress for the whole process
          sharedKeys: (config.proxies.length > 0 ? config.proxies : ['direct']).map(
            (egress) => `${config.baseUrl}|${egress}`,
          ),
        })
      : undefined;
    // With proxies the dispatcher must come from the same undici as the fetch (mixing versions breaks).
    this.#fetch =
      deps.fetch ??
      (this.#agents.length > 0 ? (undiciFetch as unknown as FetchLike) : (globalThis.fetch as FetchLike));
    this.#logger = deps.logger;
    this.#sleep = deps.sleep ?? defaultSleep;
    this.#random = deps.random ?? Math.random;
    this.#observer = deps.observer;
    const versionOf = deps.clientVersion;
    this.#clientVersion = (client) => versionOf?.(client) ?? 'none';
    // with several proxies every egress starts out of quarantine (so its gauge exists from the start)
    if (this.#agents.length > 1) {
      for (let i = 0; i < this.#agents.length; i++) {
        this.#observer?.egress?.({ egress: String(i), quarantined: false });
      }
    }
    this.#breaker = deps.breaker;
  }

  /** Identical concurrent requests share one upstream call. */
  request(req: TransportRequest): Promise<TransportResponse> {
    const url = rebase(this.#config.baseUrl, req.url);
    const key = req.coalesceKey ?? `${req.method} ${url} ${req.body ?? ''}`;
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
    let moves = 0;
    let proxy = this.#agents.length > 0 ? (req.proxy ?? 0) % this.#agents.length : 0;
    // a quarantined egress is skipped for this request only: the session keeps its home egress and goes
    // back to it once its probe succeeds
    proxy = this.#quarantine.pick(proxy);
    for (;;) {
      try {
        await this.#takeTurn(req, proxy);
        return await this.#once(req, proxy, moves > 0 && this.#agents.length === 1);
      } catch (err) {
        if (err instanceof RetryableNetworkError && attempt < this.#config.retries) {
          attempt++;
          // full jitter: uniform in [0, base * 2^attempt), at most RETRY_MAX_DELAY_MS
          const delay = backoffDelay(
            { baseMs: this.#config.retryBaseMs * 2, maxMs: RETRY_MAX_DELAY_MS, jitter: 'full' },
            attempt,
            this.#random,
          );
          this.#logger?.warn(
            {
              attempt,
              delay,
              reason: err.message,
              ...(err.network ? { network_cause: err.network.cause, code: err.network.code } : {}),
            },
            'youtube request failed; retrying',
          );
          await this.#sleep(delay);
          continue;
        }
        const n = this.#agents.length;
        if (
          err instanceof AppError &&
          err.code === 'UPSTREAM_BLOCKED' &&
          err.reason !== 'cooling_down' &&
          // our own pacing: another proxy has its own budget, a fresh connection does not
          (err.reason !== 'paced' || n > 1)
        ) {
          // Several proxies: move to the next one (at most once through each). One rotating proxy: a new
          // connection gets a new egress address, up to YOUTUBE_BLOCKED_RETRIES times.
          const allowed = n > 1 ? n - 1 : n === 1 ? this.#config.blockedRetries : 0;
          if (moves < allowed) {
            moves++;
            if (n > 1) {
              proxy = this.#quarantine.pick((proxy + 1) % n);
              req.onProxyMoved?.(proxy);
            }
            this.#logger?.warn(
              { reason: err.reason, proxy, fresh_connection: n === 1 },
              err.reason === 'paced'
                ? 'egress busy under pacing; trying another egress'
                : 'youtube blocked us; retrying through another egress',
            );
            continue;
          }
        }
        if (err instanceof RetryableNetworkError) {
          if (err.network) {
            this.#logger?.warn(
              { network_cause: err.network.cause, code: err.network.code, attempts: attempt + 1 },
              `the video platform could not be reached: ${err.network.detail}`,
            );
            throw Errors.upstreamError(
              `The video platform could not be reached: ${err.network.detail}.`,
              err.cause,
            );
          }
          throw Errors.upstreamError(`The video platform failed: ${err.message}`, err.cause);
        }
        throw err;
      }
    }
  }

  /**
   * Waits for this egress's next slot under pacing (every attempt counts: the platform sees each). A
   * translated track costs more, since `tlang` requests are the first the platform rate-limits.
   */
  async #takeTurn(req: TransportRequest, proxy: number): Promise<void> {
    if (!this.#pacer) return;
    const cost = /[?&]tlang=/.test(req.url) ? this.#config.pacing.translatedCost : 1;
    try {
      const waitMs = await this.#pacer.acquire(proxy, cost);
      this.#observer?.paced?.({ waitMs, refused: false });
    } catch (err) {
      if (!(err instanceof PacingWaitTooLongError)) throw err;
      this.#observer?.paced?.({ waitMs: err.waitMs, refused: true });
      const seconds = Math.ceil(err.waitMs / 1000);
      throw Errors.upstreamBlocked(
        'paced',
        `We pace our requests to the video platform to stay under the rates that get an address blocked, and this one would wait ${seconds} s for its turn. Retry later.`,
        undefined,
        seconds,
      );
    }
  }

  async #once(req: TransportRequest, proxy: number, freshConnection: boolean): Promise<TransportResponse> {
    const { probe } = this.#breaker?.admit() ?? { probe: false };
    const started = performance.now();
    let outcome: UpstreamOutcome = 'error';
    try {
      const res = await this.#send(req, proxy, freshConnection);
      if (req.inspect) res.parsed = req.inspect(res);
      outcome = 'ok';
      return res;
    } catch (err) {
      outcome = err instanceof RetryableNetworkError ? 'error' : outcomeOf(err);
      throw err;
    } finally {
      this.#breaker?.record(outcome, probe);
      const wasQuarantined = this.#quarantine.isQuarantined(proxy);
      this.#quarantine.record(proxy, isAnswer(outcome) ? 'ok' : isRefusal(outcome) ? 'flagged' : 'neutral');
      const quarantined = this.#quarantine.isQuarantined(proxy);
      try {
        if (quarantined !== wasQuarantined) {
          this.#observer?.egress?.({ egress: String(proxy), quarantined });
          this.#logger?.warn(
            { egress: proxy, quarantined },
            quarantined ? 'egress quarantined after a bot check or a 429' : 'egress back from quarantine',
          );
        }
        this.#observer?.call({
          client: req.client,
          clientVersion: this.#clientVersion(req.client),
          endpoint: req.endpoint,
          egress: this.#agents.length > 0 ? String(proxy) : 'direct',
          outcome,
          durationMs: performance.now() - started,
        });
      } catch (err) {
        this.#logger?.warn({ err }, 'upstream observer failed');
      }
    }
  }

  async #send(req: TransportRequest, proxy: number, freshConnection: boolean): Promise<TransportResponse> {
    const headers: Record<string, string> = {
      'Accept-Language': 'en-US,en;q=0.9',
      // "accept all" consent, so EU egress never lands on consent.youtube.com
      Cookie: 'SOCS=CAI; PREF=hl=en&tz=UTC',
      ...req.headers,
    };
    if (req.body !== undefined) headers['Content-Type'] = 'application/json';
    const signal = AbortSignal.timeout(this.#config.timeoutMs);
    // a retry through a single rotating proxy gets its own connection (and so a new egress address)
    const fresh = freshConnection ? new ProxyAgent(this.#config.proxies[0] as string) : undefined;
    const agent = fresh ?? this.#agents[proxy];
    this.upstreamCalls++;
    try {
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
        const network = networkCauseOf(err);
        this.#observer?.network?.({ cause: network.cause });
        throw new RetryableNetworkError(network.detail, { cause: err, network });
      }
      const text = await readCapped(res, this.#config.maxBodyBytes[req.endpoint], req.endpoint, signal);
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
        const { message, apiStatus } = errorMessage(text);
        throw Errors.upstreamError(
          `The video platform answered HTTP ${res.status}: ${message}`,
          new UpstreamHttpError(res.status, apiStatus),
        );
      }
      return { status: res.status, text, contentType };
    } finally {
      if (fresh) fresh.close().catch(() => undefined);
    }
  }
}

/** Reads at most `max` bytes of the body; a larger answer is abandoned (memory stays bounded). */
async function readCapped(
  res: Response,
  max: number,
  endpoint: UpstreamEndpoint,
  signal: AbortSignal,
): Promise<string> {
  const tooLarge = () =>
    Errors.upstreamError(
      `The platform's ${endpoint} answer is larger than ${max} bytes; refusing to read it.`,
      new BodyTooLargeError(endpoint, max),
    );
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > max) {
    await res.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > max) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge();
      }
      chunks.push(value);
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    if (signal.aborted) throw Errors.upstreamTimeout(undefined, err);
    throw new RetryableNetworkError('connection dropped while reading the body', { cause: err });
  }
  return Buffer.concat(chunks, total).toString('utf8');
}

/** The cause of an answer abandoned at the endpoint's body cap (outcome `too_large`). */
export class BodyTooLargeError extends Error {
  constructor(endpoint: UpstreamEndpoint, max: number) {
    super(`${endpoint} answer above ${max} bytes`);
  }
}

/** The outcome class of a failed request (see observer.ts). */
export function outcomeOf(err: unknown): UpstreamOutcome {
  if (!(err instanceof AppError)) return 'error';
  if (err.code === 'UPSTREAM_TIMEOUT') return 'timeout';
  if (err.code === 'UPSTREAM_BLOCKED') {
    switch (err.reason) {
      case 'http_429':
      case 'rate_limited':
        return 'rate_limited';
      case 'login_required':
        return 'login_required';
      case 'po_token':
      case 'empty_caption_body':
        return 'po_gated_empty';
      default:
        // bot_check, captcha, page_reload
        return 'bot_check';
    }
  }
  const cause = err.cause;
  if (cause instanceof UpstreamHttpError && cause.status === 400 && cause.apiStatus === 'FAILED_PRECONDITION')
    return 'client_rejected';
  if (cause instanceof BodyTooLargeError) return 'too_large';
  // definitive answers about the video are the platform working as it should
  if (err.code === 'VIDEO_UNAVAILABLE') return 'unplayable';
  if (err.code === 'NO_SUBTITLES' || err.code === 'VIDEO_PROCESSING') return 'no_tracks';
  if (err.code === 'VIDEO_NOT_FOUND' || err.code === 'PLAYLIST_NOT_FOUND') return 'ok';
  return 'error';
}

function errorMessage(body: string): { message: string; apiStatus: string | undefined } {
  try {
    const j = JSON.parse(body) as { error?: { message?: string; status?: string } };
    return {
      message: [j.error?.status, j.error?.message].filter(Boolean).join(' ') || 'no details',
      apiStatus: j.error?.status,
    };
  } catch {
    return { message: 'no details', apiStatus: undefined };
  }
}

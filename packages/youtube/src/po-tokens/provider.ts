import { Errors } from '@subx/errors';

/**
 * PO tokens from a bgutil provider (`POST /get_pot`), cached per video until the provider's `expiresAt`
 * (less a margin, so a token is never sent in its last minute); without `expiresAt`, for
 * `DEFAULT_TTL_MS` (bgutil's own cache lifetime). Its health is measured like any dependency: latency
 * and failures of the last calls and the age of the tokens handed out (`health()`).
 */
export interface PoTokenProviderOptions {
  /** The provider's base URL (the `/get_pot` path is appended). */
  url: string;
  timeoutMs: number;
  clock?: { now(): number };
  /** Videos whose tokens are kept (oldest dropped first). */
  maxEntries?: number;
  /** Told every call to the provider and the age of every token handed out (metrics plug in here). */
  observer?: PoTokenObserver;
}

/** One call to the provider: a token, or a failure (unreachable, an error status, no token). */
interface PoTokenCall {
  outcome: 'ok' | 'error';
  durationMs: number;
}

export interface PoTokenObserver {
  call(call: PoTokenCall): void;
  /** A token handed to a caption URL, this old (0 for a fresh one). */
  served?(ageMs: number): void;
}

export interface PoTokenHealth {
  calls: number;
  failures: number;
  /** Latency of the last successful call. */
  lastLatencyMs: number | undefined;
  /** Age of the oldest token still cached (how stale a token being sent can be). */
  oldestTokenAgeMs: number | undefined;
}

/** bgutil caches a token for 6 h. */
export const DEFAULT_TTL_MS = 6 * 3_600_000;
const EXPIRY_MARGIN_MS = 60_000;

interface Entry {
  token: Promise<string>;
  issuedAt: number;
  /** Refetch from then on; Infinity until the answer says. */
  staleAt: number;
}

export class PoTokenProvider {
  readonly #options: PoTokenProviderOptions;
  readonly #clock: { now(): number };
  readonly #entries = new Map<string, Entry>();
  readonly #maxEntries: number;
  #calls = 0;
  #failures = 0;
  #lastLatencyMs: number | undefined;

  constructor(options: PoTokenProviderOptions) {
    this.#options = options;
    this.#clock = options.clock ?? { now: () => Date.now() };
    this.#maxEntries = options.maxEntries ?? 1_000;
  }

  get(videoId: string): Promise<string> {
    const now = this.#clock.now();
    const hit = this.#entries.get(videoId);
    if (hit && now < hit.staleAt) {
      this.#report(() => this.#options.observer?.served?.(now - hit.issuedAt));
      return hit.token;
    }
    const entry: Entry = { token: Promise.resolve(''), issuedAt: now, staleAt: Infinity };
    entry.token = this.#fetch(videoId).then(({ token, expiresAt }) => {
      entry.staleAt = (expiresAt ?? entry.issuedAt + DEFAULT_TTL_MS) - EXPIRY_MARGIN_MS;
      this.#report(() => this.#options.observer?.served?.(0));
      return token;
    });
    entry.token.catch(() => {
      if (this.#entries.get(videoId) === entry) this.#entries.delete(videoId);
    });
    this.#entries.delete(videoId);
    this.#entries.set(videoId, entry);
    if (this.#entries.size > this.#maxEntries)
      this.#entries.delete(this.#entries.keys().next().value as string);
    return entry.token;
  }

  health(): PoTokenHealth {
    const now = this.#clock.now();
    let oldest: number | undefined;
    for (const e of this.#entries.values()) oldest = Math.max(oldest ?? 0, now - e.issuedAt);
    return {
      calls: this.#calls,
      failures: this.#failures,
      lastLatencyMs: this.#lastLatencyMs,
      oldestTokenAgeMs: oldest,
    };
  }

  async #fetch(videoId: string): Promise<{ token: string; expiresAt: number | undefined }> {
    this.#calls++;
    const started = performance.now();
    try {
      const res = await fetch(`${this.#options.url}/get_pot`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ content_binding: videoId }),
        signal: AbortSignal.timeout(this.#options.timeoutMs),
      }).catch((err: unknown) => {
        throw Errors.upstreamError('The PO-token provider is not reachable.', err);
      });
      const body = (await res.json().catch(() => undefined)) as
        { poToken?: unknown; expiresAt?: unknown } | undefined;
      if (!res.ok || typeof body?.poToken !== 'string' || body.poToken === '') {
        throw Errors.upstreamError(`The PO-token provider answered HTTP ${res.status} without a token.`);
      }
      const expiresAt = typeof body.expiresAt === 'string' ? Date.parse(body.expiresAt) : Number.NaN;
      this.#lastLatencyMs = performance.now() - started;
      this.#report(() =>
        this.#options.observer?.call({ outcome: 'ok', durationMs: this.#lastLatencyMs ?? 0 }),
      );
      return { token: body.poToken, expiresAt: Number.isFinite(expiresAt) ? expiresAt : undefined };
    } catch (err) {
      this.#failures++;
      const durationMs = performance.now() - started;
      this.#report(() => this.#options.observer?.call({ outcome: 'error', durationMs }));
      throw err;
    }
  }

  /** A failing observer (metrics) must never fail the token it reports on. */
  #report(notify: () => void): void {
    try {
      notify();
    } catch {
      // metrics are best effort
    }
  }
}

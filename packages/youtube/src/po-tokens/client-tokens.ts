/** The client's PO tokens: a provider started on first use, when a provider URL is configured. */
import type { Clock } from '../types.ts';
import { PoTokenProvider, type PoTokenHealth, type PoTokenObserver } from './provider.ts';

/** PO tokens kept per video (bounded: an LRU of this many entries). */
const PO_TOKEN_CACHE = 500;

export class ClientPoTokens {
  readonly #url: string | undefined;
  readonly #timeoutMs: number;
  readonly #clock: Clock;
  readonly #observer: PoTokenObserver | undefined;
  #provider: PoTokenProvider | undefined;

  constructor(options: {
    url: string | undefined;
    timeoutMs: number;
    clock: Clock;
    observer?: PoTokenObserver | undefined;
  }) {
    this.#url = options.url;
    this.#timeoutMs = options.timeoutMs;
    this.#clock = options.clock;
    this.#observer = options.observer;
  }

  /** Whether a provider is configured (else gated caption URLs are skipped, not fetched). */
  get configured(): boolean {
    return Boolean(this.#url);
  }

  /** The provider's health (calls, failures, latency, token age); undefined until first used. */
  health(): PoTokenHealth | undefined {
    return this.#provider?.health();
  }

  /** A PO token for the video's WEB caption URLs (cached per video until the provider's expiry). */
  get(videoId: string): Promise<string> {
    this.#provider ??= new PoTokenProvider({
      url: this.#url ?? '',
      timeoutMs: this.#timeoutMs,
      clock: this.#clock,
      maxEntries: PO_TOKEN_CACHE,
      ...(this.#observer ? { observer: this.#observer } : {}),
    });
    return this.#provider.get(videoId);
  }
}

import { Errors } from '@subx/errors';
import type { BreakerConfig } from './config.ts';
import { isAnswer, isRefusal, type BreakerState, type UpstreamOutcome } from './observer.ts';

/**
 * A cool-down instead of hammering: when the platform blocks or rate-limits more than `ratio` of our
 * answers (and at least `minBlocks` of them) within `windowMs`, stop calling it for `cooldownMs` and
 * answer UPSTREAM_BLOCKED (reason `cooling_down`, with Retry-After) at once. After the cool-down one probe
 * request goes through (half-open): an answer that is not a block closes the breaker, a block opens it
 * again. Counts live in one bucket per second, so memory is bounded by the window.
 *
 * One breaker per platform base URL per process (`sharedBreaker`): every client in the process (the
 * extractor's and the comments service's in `npm start`) sees the same platform and shares the verdict.
 */

interface Bucket {
  second: number;
  calls: number;
  blocks: number;
}

export class CircuitBreaker {
  readonly #config: BreakerConfig;
  readonly #now: () => number;
  readonly #buckets: Bucket[];
  readonly #listeners = new Set<(state: BreakerState) => void>();
  #state: BreakerState = 'closed';
  #openedAt = 0;
  #probeInFlight = false;

  constructor(config: BreakerConfig, now: () => number = Date.now) {
    this.#config = config;
    this.#now = now;
    this.#buckets = Array.from({ length: Math.max(1, Math.ceil(config.windowMs / 1000)) }, () => ({
      second: -1,
      calls: 0,
      blocks: 0,
    }));
  }

  get state(): BreakerState {
    this.#maybeHalfOpen();
    return this.#state;
  }

  onStateChange(listener: (state: BreakerState) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Call before sending a request: throws UPSTREAM_BLOCKED/cooling_down while open (and while the one
   * half-open probe is in flight). Returns whether this request is the probe.
   */
  admit(): { probe: boolean } {
    this.#maybeHalfOpen();
    if (this.#state === 'closed') return { probe: false };
    if (this.#state === 'half_open' && !this.#probeInFlight) {
      this.#probeInFlight = true;
      return { probe: true };
    }
    const left = Math.max(1, Math.ceil((this.#openedAt + this.#config.cooldownMs - this.#now()) / 1000));
    throw Errors.upstreamBlocked(
      'cooling_down',
      `The video platform has been blocking or rate-limiting us; we stop calling it for ${left} s to recover.`,
      undefined,
      left,
    );
  }

  /** Records an answer (never called for requests the breaker refused). */
  record(outcome: UpstreamOutcome, probe: boolean): void {
    const blocked = isRefusal(outcome);
    if (probe) {
      this.#probeInFlight = false;
      if (blocked) this.#open();
      else if (isAnswer(outcome)) this.#set('closed');
      return;
    }
    const second = Math.floor(this.#now() / 1000);
    const b = this.#buckets[second % this.#buckets.length] as Bucket;
    if (b.second !== second) {
      b.second = second;
      b.calls = 0;
      b.blocks = 0;
    }
    b.calls++;
    if (blocked) b.blocks++;
    if (!blocked || this.#state !== 'closed') return;
    let calls = 0;
    let blocks = 0;
    const oldest = second - this.#buckets.length + 1;
    for (const x of this.#buckets) {
      if (x.second < oldest) continue;
      calls += x.calls;
      blocks += x.blocks;
    }
    if (blocks >= this.#config.minBlocks && blocks >= this.#config.ratio * calls) this.#open();
  }

  #open(): void {
    this.#openedAt = this.#now();
    for (const x of this.#buckets) x.second = -1;
    this.#set('open');
  }

  #maybeHalfOpen(): void {
    if (this.#state === 'open' && this.#now() - this.#openedAt >= this.#config.cooldownMs) {
      this.#probeInFlight = false;
      this.#set('half_open');
    }
  }

  #set(state: BreakerState): void {
    if (this.#state === state) return;
    this.#state = state;
    for (const l of this.#listeners) l(state);
  }
}

const shared = new Map<string, CircuitBreaker>();

/** The process-wide breaker for one platform base URL and one set of breaker settings. */
export function sharedBreaker(baseUrl: string, config: BreakerConfig): CircuitBreaker {
  const key = `${baseUrl} ${JSON.stringify(config)}`;
  let b = shared.get(key);
  if (!b) {
    b = new CircuitBreaker(config);
    shared.set(key, b);
  }
  return b;
}

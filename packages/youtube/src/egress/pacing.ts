/**
 * Egress pacing: a token bucket per egress address (each proxy; the machine's own address without
 * proxies), so the service stays under the request rates that get an address blocked instead of
 * finding them. The evidence for the defaults (README, "Pacing"): yt-dlp's maintainers put the
 * platform's guest-session limit at about 300 videos (about 1,000 player requests) an hour and
 * recommend `--sleep-requests 1.25`; users report a guaranteed 429 after 60 caption requests in 5
 * minutes from one address; and translated tracks (`tlang`) are the first to be rate-limited.
 *
 * A request takes its tokens at once and waits until the bucket would have held them (so waiting
 * requests are served in arrival order, and a burst after a quiet spell goes straight through). One
 * that would wait longer than `maxWaitMs` takes nothing and is refused with the wait it would need:
 * a bounded wait, and a caller told when to come back, rather than a queue without end.
 */

export interface PacingClock {
  now(): number;
}

export interface EgressPacingOptions {
  /** Egress addresses (1 without proxies). */
  count: number;
  /** Tokens added per minute to each egress's bucket (one token = one plain request). */
  perMinute: number;
  /** Bucket size: how many requests a quiet egress may send at once. */
  burst: number;
  /** The longest a request may wait for its tokens before it is refused. */
  maxWaitMs: number;
  clock?: PacingClock;
  sleep?: (ms: number) => Promise<void>;
  /**
   * One key per egress (base URL and proxy): buckets with the same key are shared by every pacer of
   * the process, so two clients (the extractor's and the comments service's in `npm start`, or a
   * canary's) spend one budget per address, as the platform counts it. Not with an injected `sleep`
   * (a test's virtual time keeps its buckets to itself).
   */
  sharedKeys?: readonly string[];
}

/** Process-wide buckets by egress key (and rate, so a different setting gets its own). */
const sharedBuckets = new Map<string, Bucket>();

/** Thrown when the tokens a request needs would take longer than `maxWaitMs` to come. */
export class PacingWaitTooLongError extends Error {
  readonly waitMs: number;
  constructor(waitMs: number) {
    super(`pacing: the next slot on this egress is ${Math.ceil(waitMs)} ms away`);
    this.name = 'PacingWaitTooLongError';
    this.waitMs = waitMs;
  }
}

interface Bucket {
  tokens: number;
  at: number;
}

export class EgressPacer {
  readonly #buckets: Bucket[];
  readonly #perMs: number;
  readonly #burst: number;
  readonly #maxWaitMs: number;
  readonly #clock: PacingClock;
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(options: EgressPacingOptions) {
    if (!(options.perMinute > 0)) throw new RangeError('pacing: perMinute must be above 0');
    this.#perMs = options.perMinute / 60_000;
    this.#burst = Math.max(1, options.burst);
    this.#maxWaitMs = Math.max(0, options.maxWaitMs);
    this.#clock = options.clock ?? { now: () => Date.now() };
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    const now = this.#clock.now();
    const fresh = (): Bucket => ({ tokens: this.#burst, at: now });
    if (options.sharedKeys && options.sharedKeys.length > 0 && !options.sleep) {
      this.#buckets = options.sharedKeys.map((key) => {
        const id = `${key} ${options.perMinute}/${this.#burst}`;
        let bucket = sharedBuckets.get(id);
        if (!bucket) sharedBuckets.set(id, (bucket = fresh()));
        return bucket;
      });
    } else {
      this.#buckets = Array.from({ length: Math.max(1, options.count) }, fresh);
    }
  }

  /**
   * Takes `cost` tokens from the egress's bucket and resolves once they are due, with the time
   * waited (0 when they were there). Throws `PacingWaitTooLongError` without taking anything when the
   * wait would exceed the bound.
   */
  async acquire(egress: number, cost = 1): Promise<number> {
    const bucket = this.#buckets[egress % this.#buckets.length] as Bucket;
    const now = this.#clock.now();
    bucket.tokens = Math.min(this.#burst, bucket.tokens + (now - bucket.at) * this.#perMs);
    bucket.at = now;
    // A cost above the bucket's size could never be met at once: it waits for a full bucket.
    const need = Math.min(cost, this.#burst);
    const waitMs = bucket.tokens >= need ? 0 : (need - bucket.tokens) / this.#perMs;
    if (waitMs > this.#maxWaitMs) throw new PacingWaitTooLongError(waitMs);
    bucket.tokens -= need;
    if (waitMs > 0) await this.#sleep(waitMs);
    return waitMs;
  }

  /** Tokens now in each egress's bucket (negative: requests already waiting), for diagnostics. */
  available(): number[] {
    const now = this.#clock.now();
    return this.#buckets.map((b) => Math.min(this.#burst, b.tokens + (now - b.at) * this.#perMs));
  }
}

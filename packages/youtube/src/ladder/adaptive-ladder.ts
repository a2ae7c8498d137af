/**
 * The adaptive caption ladder. The platform retires client identities overnight (VISIONOS answered 400
 * to every /player on 2026-09-11; ANDROID_VR 1.65 lost every format on 2026-08-17), and a fixed ladder
 * then pays one wasted round trip per cold extract on the very requests most likely to get an egress
 * flagged. So each identity (name and version) keeps a record of its recent outcomes: a client that keeps
 * being refused drops behind the healthy ones (asked only when they fail), and after `retireAfter`
 * refusals in a row drops out (not even asked as a fallback). Either way it takes its configured place
 * again as a probe once per `probeIntervalMs`; one success brings it straight back.
 *
 * Only outcomes about the client count. A video that one client refuses and another serves (made for
 * kids, regional refusals), a bot check or a 429 (about the egress), and "not found" say nothing about
 * whether the client identity still works, so they are not recorded against it.
 *
 * Candidates (catalogue entries with `canary: true`, e.g. TV_SAMSUNG) are on no ladder until proven:
 * the canaries probe them on their own, and only `adoptAfter` successes in a row (a probe that fetched
 * a caption body that answers) adopt one; from then it is asked first, like yt-dlp's defaults. One
 * refusal or empty caption answer demotes it again: back to unproven, served to no user until the
 * canaries prove it anew. Users are never the probes of a candidate.
 */

export interface LadderClock {
  now(): number;
}

export interface AdaptiveLadderOptions {
  /** Refusals in a row after which a client is out of the ladder until a probe succeeds (default 3). */
  retireAfter?: number;
  /** How often an out client is tried again as a probe (default 60 000 ms). */
  probeIntervalMs?: number;
  /** Successes in a row (canary probes that got caption bodies) that adopt a candidate (default 2). */
  adoptAfter?: number;
  clock?: LadderClock;
}

/** What one /player attempt told about the client identity that made it. */
export type LadderVerdict = 'ok' | 'client_failed' | 'neutral';

export interface ClientHealth {
  /** `NAME@version` */
  identity: string;
  consecutiveFailures: number;
  /** Successes since the last failure (a candidate is adopted at `adoptAfter`). */
  consecutiveOk: number;
  okTotal: number;
  failedTotal: number;
  /** Out of the ladder (only probed) since this time, or undefined while in. */
  outSince: number | undefined;
  lastProbeAt: number | undefined;
}

export class AdaptiveLadder {
  readonly #retireAfter: number;
  readonly #probeIntervalMs: number;
  readonly #adoptAfter: number;
  readonly #clock: LadderClock;
  readonly #health = new Map<string, ClientHealth>();

  constructor(options: AdaptiveLadderOptions = {}) {
    this.#retireAfter = Math.max(1, options.retireAfter ?? 3);
    this.#probeIntervalMs = Math.max(0, options.probeIntervalMs ?? 60_000);
    this.#adoptAfter = Math.max(1, options.adoptAfter ?? 2);
    this.#clock = options.clock ?? { now: () => Date.now() };
  }

  /**
   * The order to ask the clients of `base` (configured order, each `{ name, version }`) in: healthy ones in
   * configured order, then those with recent refusals, then none of the out ones; a refused or out client
   * whose probe is due takes its configured place (and marks the probe taken, so concurrent extracts send
   * one).
   * When every client is out, all are returned in configured order: asking beats failing without trying.
   */
  order<T extends { name: string; version: string }>(base: readonly T[]): T[] {
    const now = this.#clock.now();
    const healthy: T[] = [];
    const suspect: T[] = [];
    const probes: T[] = [];
    for (const c of base) {
      const h = this.#health.get(identityOf(c));
      if (!h || h.consecutiveFailures === 0) healthy.push(c);
      else if (h.lastProbeAt === undefined || now - h.lastProbeAt >= this.#probeIntervalMs) {
        h.lastProbeAt = now;
        probes.push(c);
      } else if (h.outSince === undefined) suspect.push(c);
    }
    const chosen = new Set([...healthy, ...suspect, ...probes]);
    if (chosen.size === 0) return [...base];
    const inOrder = base.filter((c) => healthy.includes(c) || probes.includes(c));
    return [...inOrder, ...suspect];
  }

  /** Records what one attempt told about the client identity. */
  record(client: { name: string; version: string }, verdict: LadderVerdict): void {
    if (verdict === 'neutral') return;
    const identity = identityOf(client);
    let h = this.#health.get(identity);
    if (!h) {
      h = {
        identity,
        consecutiveFailures: 0,
        consecutiveOk: 0,
        okTotal: 0,
        failedTotal: 0,
        outSince: undefined,
        lastProbeAt: undefined,
      };
      this.#health.set(identity, h);
    }
    if (verdict === 'ok') {
      h.okTotal++;
      h.consecutiveOk++;
      h.consecutiveFailures = 0;
      h.outSince = undefined;
      h.lastProbeAt = undefined;
      return;
    }
    h.failedTotal++;
    h.consecutiveFailures++;
    h.consecutiveOk = 0;
    // the probe clock restarts with every refusal: a client is asked first at most once per interval
    h.lastProbeAt = this.#clock.now();
    if (h.outSince === undefined && h.consecutiveFailures >= this.#retireAfter) h.outSince = h.lastProbeAt;
  }

  /** Every identity's record (for diagnostics, metrics and tests). */
  health(): ClientHealth[] {
    return [...this.#health.values()].map((h) => ({ ...h }));
  }

  /** Whether a candidate identity is proven: its last `adoptAfter` verdicts were all successes. */
  isAdopted(client: { name: string; version: string }): boolean {
    return (this.#health.get(identityOf(client))?.consecutiveOk ?? 0) >= this.#adoptAfter;
  }

  /** Whether a client identity is out of the ladder (asked only as a probe). */
  isOut(client: { name: string; version: string }): boolean {
    return this.#health.get(identityOf(client))?.outSince !== undefined;
  }
}

function identityOf(c: { name: string; version: string }): string {
  return `${c.name}@${c.version}`;
}

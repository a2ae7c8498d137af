/**
 * Egress quarantine. With several proxies, an egress address that draws a bot check or a 429 is the one
 * the platform is counting: sending more through it only deepens the flag. It is skipped for
 * `quarantineMs`; then one request goes through it as a probe (concurrent requests still skip it), and
 * only a usable answer brings it back; a failed probe quarantines it again. When every egress is
 * quarantined, the preferred one is used anyway: asking beats failing without trying (the circuit
 * breaker is what stops all traffic).
 */

export interface EgressClock {
  now(): number;
}

export interface EgressQuarantineOptions {
  /** Number of egress addresses (proxies). */
  count: number;
  /** How long a flagged egress is skipped before its probe (default 300 000 ms). */
  quarantineMs?: number;
  clock?: EgressClock;
}

/** What one answer through an egress says about it. */
export type EgressVerdict = 'ok' | 'flagged' | 'neutral';

interface EgressState {
  /** Skipped until then; undefined while healthy. */
  until: number | undefined;
  probing: boolean;
}

export class EgressQuarantine {
  readonly #states: EgressState[];
  readonly #quarantineMs: number;
  readonly #clock: EgressClock;

  constructor(options: EgressQuarantineOptions) {
    this.#states = Array.from({ length: Math.max(0, options.count) }, () => ({
      until: undefined,
      probing: false,
    }));
    this.#quarantineMs = Math.max(0, options.quarantineMs ?? 300_000);
    this.#clock = options.clock ?? { now: () => Date.now() };
  }

  /**
   * The egress to use, starting from `preferred` (the session's) and going round: the first that is
   * healthy, or quarantined with its probe due (that request becomes the probe).
   */
  pick(preferred: number): number {
    const n = this.#states.length;
    if (n === 0) return preferred;
    const now = this.#clock.now();
    for (let i = 0; i < n; i++) {
      const index = (preferred + i) % n;
      const s = this.#states[index] as EgressState;
      if (s.until === undefined) return index;
      if (!s.probing && now >= s.until) {
        s.probing = true;
        return index;
      }
    }
    return preferred % n;
  }

  record(index: number, verdict: EgressVerdict): void {
    const s = this.#states[index];
    if (!s || verdict === 'neutral') return;
    s.probing = false;
    s.until = verdict === 'ok' ? undefined : this.#clock.now() + this.#quarantineMs;
  }

  isQuarantined(index: number): boolean {
    return this.#states[index]?.until !== undefined;
  }

  /** Indexes of the quarantined egresses (for metrics and diagnostics). */
  quarantined(): number[] {
    return this.#states.flatMap((s, i) => (s.until !== undefined ? [i] : []));
  }
}

import type { NetworkCause } from './network-cause.ts';
import type { PoTokenObserver } from './po-tokens/provider.ts';

/**
 * The one place where every upstream call's outcome is reported. The client calls it once per HTTP
 * request it sends to the platform (coalesced callers share one report), and whenever the shared
 * circuit breaker changes state. Services plug their metrics in here (`YouTubeClient.create(config,
 * { observer })`); the client itself keeps running totals (`YouTubeClient.upstreamStats`) so tests and
 * the live canary can read them without a metrics stack.
 */

/** Where a request went: the InnerTube endpoint, or the caption GET, or the session bootstrap. */
export type UpstreamEndpoint =
  'player' | 'next' | 'browse' | 'resolve_url' | 'search' | 'timedtext' | 'visitor_id' | 'sw_js_data';

/**
 * The typed outcome of one upstream call:
 * - ok: a usable answer (a definitive "not found" is ok: the platform answered);
 * - unplayable: the platform answered that the video cannot be played (private, removed, members
 *   only, age-gated, ...): about the video, not us;
 * - no_tracks: the platform answered, with no caption track for the video;
 * - bot_check: "confirm you're not a bot", a captcha, "the page needs to be reloaded";
 * - login_required: LOGIN_REQUIRED that is neither age nor privacy: a session/address signal;
 * - po_gated_empty: a 200 with an empty body where a PO token was required (caption URLs of
 *   WEB-family clients since Aug 2026);
 * - rate_limited: HTTP 429 or "try again later";
 * - client_rejected: 400 FAILED_PRECONDITION, the platform refusing this client identity (a retired
 *   version or client, e.g. VISIONOS on 2026-09-11): about the client, not the egress or the video;
 * - timeout: no answer within the per-request timeout;
 * - too_large: an answer above the endpoint's body cap, abandoned;
 * - error: network failure, other 4xx/5xx, an unparseable body.
 */
export type UpstreamOutcome =
  | 'ok'
  | 'unplayable'
  | 'no_tracks'
  | 'bot_check'
  | 'login_required'
  | 'po_gated_empty'
  | 'rate_limited'
  | 'client_rejected'
  | 'timeout'
  | 'too_large'
  | 'error';

export const UPSTREAM_OUTCOMES: readonly UpstreamOutcome[] = [
  'ok',
  'unplayable',
  'no_tracks',
  'bot_check',
  'login_required',
  'po_gated_empty',
  'rate_limited',
  'client_rejected',
  'timeout',
  'too_large',
  'error',
];

/** The platform refusing us (the session or the address), as the breaker and the quarantine count it. */
export function isRefusal(outcome: UpstreamOutcome): boolean {
  return (
    outcome === 'bot_check' ||
    outcome === 'login_required' ||
    outcome === 'po_gated_empty' ||
    outcome === 'rate_limited'
  );
}

/** The platform answered as it should (about the video, even when the answer is "no"). */
export function isAnswer(outcome: UpstreamOutcome): boolean {
  return outcome === 'ok' || outcome === 'unplayable' || outcome === 'no_tracks';
}

export interface UpstreamCall {
  /** InnerTube client name (WEB, ANDROID, VISIONOS, IOS, ...); 'none' for requests not made as a client. */
  client: string;
  /** That client identity's version at the time ('none' for requests not made as a client). */
  clientVersion?: string;
  /** The proxy's index in YOUTUBE_PROXIES, or 'direct' without proxies. */
  egress?: string;
  endpoint: UpstreamEndpoint;
  outcome: UpstreamOutcome;
  durationMs: number;
}

export type BreakerState = 'closed' | 'open' | 'half_open';

/** A request's turn under egress pacing: how long it waited, or that it was refused (the wait too long). */
export interface PacedRequest {
  waitMs: number;
  refused: boolean;
}

export interface UpstreamObserver {
  call(call: UpstreamCall): void;
  breaker?(state: BreakerState): void;
  paced?(request: PacedRequest): void;
  /** An egress went into quarantine (a bot check or a 429) or came back (egress/quarantine.ts). */
  egress?(change: { egress: string; quarantined: boolean }): void;
  /** The PO-token provider, measured like any dependency (po-tokens/provider.ts). */
  poToken?: PoTokenObserver;
  /** A request that got no answer at all, by why (network-cause.ts): DNS, refused, reset, TLS, timeout. */
  network?(failure: { cause: NetworkCause }): void;
}

/** Running totals by `client|endpoint|outcome`, kept by every client. */
export class UpstreamStats implements UpstreamObserver {
  readonly counts = new Map<string, number>();
  breakerState: BreakerState = 'closed';
  /** Requests that waited for their turn under pacing, and requests refused by it. */
  pacedWaits = 0;
  pacedRefusals = 0;
  /** Requests that got no answer at all, by cause. */
  readonly networkFailures = new Map<NetworkCause, number>();
  /** Wall-clock times of the last answer of any kind and of the last request that got none. */
  lastAnswerAtMs = 0;
  lastNetworkFailureAtMs = 0;

  call(c: UpstreamCall): void {
    const key = `${c.client}|${c.endpoint}|${c.outcome}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    if (c.outcome !== 'error' && c.outcome !== 'timeout') this.lastAnswerAtMs = Date.now();
  }

  network(failure: { cause: NetworkCause }): void {
    this.networkFailures.set(failure.cause, (this.networkFailures.get(failure.cause) ?? 0) + 1);
    this.lastNetworkFailureAtMs = Date.now();
  }

  /**
   * The platform looks unreachable: the last request within `withinMs` got no answer at all, and
   * nothing answered since. What a health report says as `degraded` (an unreachable platform is an
   * outage of ours that no restart fixes).
   */
  unreachable(withinMs: number): boolean {
    return (
      this.lastNetworkFailureAtMs > this.lastAnswerAtMs && Date.now() - this.lastNetworkFailureAtMs < withinMs
    );
  }

  breaker(state: BreakerState): void {
    this.breakerState = state;
  }

  paced(request: PacedRequest): void {
    if (request.refused) this.pacedRefusals++;
    else if (request.waitMs > 0) this.pacedWaits++;
  }

  /** Sum over the entries matching every given field. */
  total(filter: Partial<Pick<UpstreamCall, 'client' | 'endpoint' | 'outcome'>> = {}): number {
    let n = 0;
    for (const [key, count] of this.counts) {
      const [client, endpoint, outcome] = key.split('|');
      if (filter.client !== undefined && filter.client !== client) continue;
      if (filter.endpoint !== undefined && filter.endpoint !== endpoint) continue;
      if (filter.outcome !== undefined && filter.outcome !== outcome) continue;
      n += count;
    }
    return n;
  }
}

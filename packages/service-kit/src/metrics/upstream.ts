/**
 * The video platform seen from our side: every request's outcome and latency, the circuit breaker,
 * egress quarantine and pacing, requests that got no answer at all, the PO-token provider, and the
 * canary's probes.
 */
import { counter, gauge, histogram } from './registry.ts';

export type UpstreamOutcomeLabel =
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
/** Tokens live up to 6 h (bgutil's cache): a minute to six hours. */
const PO_TOKEN_AGE_BUCKETS = [0, 60, 300, 900, 1_800, 3_600, 7_200, 14_400, 21_600];

export type BreakerStateLabel = 'closed' | 'open' | 'half_open';
const BREAKER_STATES: readonly BreakerStateLabel[] = ['closed', 'open', 'half_open'];

/**
 * An observer in the shape of @subx/youtube's `UpstreamObserver` (structurally typed, so the kit
 * does not depend on the platform client). `component` is the owning service (extractor,
 * comments). Not `service` nor `endpoint`: the Prometheus Operator sets those on every target
 * (Kubernetes Service, port name) and would rename ours to exported_*.
 */
export function upstreamMetrics(component: string): {
  call(call: {
    client: string;
    clientVersion?: string;
    endpoint: string;
    egress?: string;
    outcome: UpstreamOutcomeLabel;
    durationMs: number;
  }): void;
  breaker(state: BreakerStateLabel): void;
  egress(change: { egress: string; quarantined: boolean }): void;
  paced(request: { waitMs: number; refused: boolean }): void;
  network(failure: { cause: string }): void;
  poToken: {
    call(call: { outcome: 'ok' | 'error'; durationMs: number }): void;
    served(ageMs: number): void;
  };
} {
  const calls = counter(
    'subx_upstream_requests_total',
    'HTTP requests sent to the video platform, by platform client and its version, endpoint, egress (proxy index or direct) and outcome.',
    ['component', 'client', 'client_version', 'upstream_endpoint', 'egress', 'outcome'],
  );
  const quarantined = gauge(
    'subx_upstream_egress_quarantined',
    'With several proxies: 1 while the egress is quarantined (it drew a bot check or a 429 and waits for its probe), else 0.',
    ['component', 'egress'],
  );
  const duration = histogram(
    'subx_upstream_request_duration_seconds',
    'Platform request latency, by platform client and endpoint.',
    ['component', 'client', 'upstream_endpoint'],
  );
  const breaker = gauge(
    'subx_upstream_circuit_breaker_state',
    'Circuit breaker of the platform client: 1 for the current state, 0 for the others.',
    ['component', 'state'],
  );
  for (const state of BREAKER_STATES) breaker.set({ component, state }, state === 'closed' ? 1 : 0);
  const pacingWait = histogram(
    'subx_upstream_pacing_wait_seconds',
    'How long platform requests waited for their turn under egress pacing (YOUTUBE_PACING).',
    ['component'],
  );
  const pacingRefused = counter(
    'subx_upstream_pacing_refusals_total',
    'Platform requests refused by egress pacing (the wait would exceed YOUTUBE_PACING_MAX_WAIT_MS): answered UPSTREAM_BLOCKED paced.',
    ['component'],
  );
  const networkErrors = counter(
    'subx_upstream_network_errors_total',
    'Platform requests that got no answer at all, by cause: dns, refused (or no route), reset, tls, timeout, other.',
    ['component', 'cause'],
  );
  const poTokenCalls = counter(
    'subx_po_token_requests_total',
    'Calls to the PO-token provider (YOUTUBE_PO_TOKEN_PROVIDER_URL), by outcome (ok, error).',
    ['component', 'outcome'],
  );
  const poTokenDuration = histogram('subx_po_token_request_duration_seconds', 'PO-token provider latency.', [
    'component',
  ]);
  const poTokenAge = histogram(
    'subx_po_token_age_seconds',
    'Age of the PO tokens put on caption URLs (0 for a freshly minted one).',
    ['component'],
    PO_TOKEN_AGE_BUCKETS,
  );
  return {
    call({ client, clientVersion, endpoint, egress, outcome, durationMs }) {
      calls.inc({
        component,
        client,
        client_version: clientVersion ?? 'none',
        upstream_endpoint: endpoint,
        egress: egress ?? 'direct',
        outcome,
      });
      duration.observe({ component, client, upstream_endpoint: endpoint }, durationMs / 1000);
    },
    breaker(current) {
      for (const state of BREAKER_STATES) breaker.set({ component, state }, state === current ? 1 : 0);
    },
    egress({ egress, quarantined: now }) {
      quarantined.set({ component, egress }, now ? 1 : 0);
    },
    paced({ waitMs, refused }) {
      if (refused) pacingRefused.inc({ component });
      else pacingWait.observe({ component }, waitMs / 1000);
    },
    network({ cause }) {
      networkErrors.inc({ component, cause });
    },
    poToken: {
      call({ outcome, durationMs }) {
        poTokenCalls.inc({ component, outcome });
        poTokenDuration.observe({ component }, durationMs / 1000);
      },
      served(ageMs) {
        poTokenAge.observe({ component }, ageMs / 1000);
      },
    },
  };
}

/**
 * What the canary (CANARY_VIDEOS) reports per probe: one known video through one client identity
 * and one egress. `subx_canary_up` is 1 while that pair's last probe succeeded; `outcome` is ok or
 * the error code (a bounded set), never the video or the message.
 */
export function canaryMetrics(): (probe: {
  client: string;
  egress: string;
  outcome: string;
  latencyMs: number;
}) => void {
  const probes = counter(
    'subx_canary_probes_total',
    'Canary probes (CANARY_VIDEOS): a known video through one platform client and one egress, by outcome.',
    ['client', 'egress', 'outcome'],
  );
  const up = gauge('subx_canary_up', "1 while the pair's last canary probe succeeded, else 0.", [
    'client',
    'egress',
  ]);
  const duration = histogram('subx_canary_probe_duration_seconds', 'Canary probe latency.', ['client']);
  return ({ client, egress, outcome, latencyMs }) => {
    probes.inc({ client, egress, outcome });
    up.set({ client, egress }, outcome === 'ok' ? 1 : 0);
    duration.observe({ client }, latencyMs / 1000);
  };
}

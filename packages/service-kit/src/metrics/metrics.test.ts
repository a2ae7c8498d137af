// The recording functions against the process registry, read back through the exposition text.
// The registry is the process's, shared with every other file run in the same worker: each test
// records under label values of its own (a route, a component, a cache, a group no other file uses)
// and reads a series that other files also record ('unmatched') as a difference.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, loadConfig, metricsPort } from '../config.ts';
import { countCredits, observeHttpRequest, statusClass } from './http.ts';
import { observeGrpcCall } from './grpc.ts';
import { cacheLookupMetrics } from './caches.ts';
import { registerConsumerLag, registerOutboxBacklog } from './bus.ts';
import { upstreamMetrics } from './upstream.ts';
import { scrape } from './registry.ts';

/** The value of one sample line, or undefined when absent. */
function valueOf(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('METRICS_PORT', () => {
  const schema = z.object({ METRICS_PORT: metricsPort.default(9464) });
  it('is a port, 0 for any free port, or off; the default applies when unset', () => {
    expect(loadConfig(schema, { METRICS_PORT: '9470' }).METRICS_PORT).toBe(9470);
    expect(loadConfig(schema, { METRICS_PORT: '0' }).METRICS_PORT).toBe(0);
    expect(loadConfig(schema, { METRICS_PORT: 'off' }).METRICS_PORT).toBeNull();
    expect(loadConfig(schema, {}).METRICS_PORT).toBe(9464);
  });
  it('rejects anything else, naming the variable', () => {
    for (const bad of ['70000', 'false', '-1', '9464x']) {
      expect(() => loadConfig(schema, { METRICS_PORT: bad })).toThrow(ConfigError);
      expect(() => loadConfig(schema, { METRICS_PORT: bad })).toThrow(/METRICS_PORT/);
    }
  });
});

describe('recording', () => {
  it('HTTP: route pattern and status class; no route is "unmatched"', async () => {
    expect([statusClass(200), statusClass(404), statusClass(503), statusClass(0)]).toEqual([
      '2xx',
      '4xx',
      '5xx',
      'other',
    ]);
    const unmatched = 'subx_http_requests_total{method="GET",route="unmatched",status_class="4xx"}';
    const unmatchedBefore = valueOf(await scrape(), unmatched) ?? 0;
    observeHttpRequest({ method: 'POST', route: '/metrics-test/extract', status: 200, seconds: 0.3 });
    observeHttpRequest({ method: 'POST', route: '/metrics-test/extract', status: 201, seconds: 0.7 });
    observeHttpRequest({ method: 'POST', route: '/metrics-test/extract', status: 503, seconds: 3 });
    observeHttpRequest({ method: 'GET', route: undefined, status: 404, seconds: 0.001 });
    const text = await scrape();
    const labels = 'method="POST",route="/metrics-test/extract"';
    expect(valueOf(text, `subx_http_requests_total{${labels},status_class="2xx"}`)).toBe(2);
    expect(valueOf(text, `subx_http_requests_total{${labels},status_class="5xx"}`)).toBe(1);
    expect(valueOf(text, unmatched)).toBe(unmatchedBefore + 1);
    // 0.3 s is within the 0.5 s bucket, 3 s is not within 2.5 s.
    expect(
      valueOf(text, `subx_http_request_duration_seconds_bucket{le="0.5",${labels},status_class="2xx"}`),
    ).toBe(1);
    expect(
      valueOf(text, `subx_http_request_duration_seconds_bucket{le="2.5",${labels},status_class="5xx"}`),
    ).toBe(0);
  });

  it('gRPC calls: counted by side, method and code; timed by side and method', async () => {
    const path = '/subx.test.v1.TestService/Probe';
    observeGrpcCall('client', path, 'OK', 0.01);
    observeGrpcCall('client', path, 'OK', 0.02);
    observeGrpcCall('client', path, 'UNAVAILABLE', 0.5);
    observeGrpcCall('server', path, 'OK', 0.005);
    const text = await scrape();
    const method = 'grpc_service="subx.test.v1.TestService",grpc_method="Probe"';
    expect(valueOf(text, `subx_grpc_client_handled_total{${method},grpc_code="OK"}`)).toBe(2);
    expect(valueOf(text, `subx_grpc_client_handled_total{${method},grpc_code="UNAVAILABLE"}`)).toBe(1);
    expect(valueOf(text, `subx_grpc_client_handling_seconds_count{${method}}`)).toBe(3);
    expect(valueOf(text, `subx_grpc_server_handled_total{${method},grpc_code="OK"}`)).toBe(1);
    expect(valueOf(text, `subx_grpc_server_handling_seconds_count{${method}}`)).toBe(1);
  });

  it('credits: zero amounts are not recorded', async () => {
    countCredits('metrics-test', 'reserved', 10);
    countCredits('metrics-test', 'released', 0);
    const text = await scrape();
    expect(valueOf(text, 'subx_credits_total{operation="metrics-test",action="reserved"}')).toBe(10);
    expect(text).not.toContain('subx_credits_total{operation="metrics-test",action="released"}');
  });

  it('upstream: one observer per component; the breaker gauge shows exactly the current state', async () => {
    const observer = upstreamMetrics('metrics-test');
    observer.call({ client: 'WEB', endpoint: 'player', outcome: 'bot_check', durationMs: 120 });
    observer.breaker('open');
    let text = await scrape();
    expect(
      valueOf(
        text,
        'subx_upstream_requests_total{component="metrics-test",client="WEB",client_version="none",upstream_endpoint="player",egress="direct",outcome="bot_check"}',
      ),
    ).toBe(1);
    expect(valueOf(text, 'subx_upstream_circuit_breaker_state{component="metrics-test",state="open"}')).toBe(
      1,
    );
    expect(
      valueOf(text, 'subx_upstream_circuit_breaker_state{component="metrics-test",state="closed"}'),
    ).toBe(0);
    observer.breaker('half_open');
    text = await scrape();
    expect(valueOf(text, 'subx_upstream_circuit_breaker_state{component="metrics-test",state="open"}')).toBe(
      0,
    );
    expect(
      valueOf(text, 'subx_upstream_circuit_breaker_state{component="metrics-test",state="half_open"}'),
    ).toBe(1);
  });

  it('PO-token provider: calls by outcome, latency, and the age of tokens served', async () => {
    const observer = upstreamMetrics('metrics-test');
    observer.poToken.call({ outcome: 'ok', durationMs: 40 });
    observer.poToken.call({ outcome: 'error', durationMs: 2_000 });
    observer.poToken.served(0);
    observer.poToken.served(7_200_000);
    const text = await scrape();
    expect(valueOf(text, 'subx_po_token_requests_total{component="metrics-test",outcome="ok"}')).toBe(1);
    expect(valueOf(text, 'subx_po_token_requests_total{component="metrics-test",outcome="error"}')).toBe(1);
    expect(valueOf(text, 'subx_po_token_request_duration_seconds_count{component="metrics-test"}')).toBe(2);
    expect(valueOf(text, 'subx_po_token_age_seconds_bucket{le="3600",component="metrics-test"}')).toBe(1);
    expect(valueOf(text, 'subx_po_token_age_seconds_bucket{le="7200",component="metrics-test"}')).toBe(2);
  });

  it('upstream: labelled by client version and egress; egress quarantine as a gauge', async () => {
    const observer = upstreamMetrics('metrics-test');
    observer.call({
      client: 'IOS',
      clientVersion: '21.03.1',
      endpoint: 'player',
      egress: '1',
      outcome: 'rate_limited',
      durationMs: 80,
    });
    observer.egress({ egress: '1', quarantined: true });
    observer.egress({ egress: '0', quarantined: false });
    const text = await scrape();
    expect(
      valueOf(
        text,
        'subx_upstream_requests_total{component="metrics-test",client="IOS",client_version="21.03.1",upstream_endpoint="player",egress="1",outcome="rate_limited"}',
      ),
    ).toBe(1);
    expect(valueOf(text, 'subx_upstream_egress_quarantined{component="metrics-test",egress="1"}')).toBe(1);
    expect(valueOf(text, 'subx_upstream_egress_quarantined{component="metrics-test",egress="0"}')).toBe(0);
  });

  it('upstream pacing: waits in a histogram, refusals counted', async () => {
    const observer = upstreamMetrics('metrics-test');
    observer.paced({ waitMs: 1_500, refused: false });
    observer.paced({ waitMs: 0, refused: false });
    observer.paced({ waitMs: 12_000, refused: true });
    const text = await scrape();
    expect(valueOf(text, 'subx_upstream_pacing_wait_seconds_count{component="metrics-test"}')).toBe(2);
    expect(valueOf(text, 'subx_upstream_pacing_wait_seconds_sum{component="metrics-test"}')).toBe(1.5);
    expect(valueOf(text, 'subx_upstream_pacing_refusals_total{component="metrics-test"}')).toBe(1);
  });

  it('cache: named by the first key segment, never by the id in the key', async () => {
    const onLookup = cacheLookupMetrics();
    onLookup('metrics_test:v1:dQw4w9WgXcQ:en:o:', true);
    onLookup('metrics_test:v1:aaaaaaaaaaa:en:o:', false);
    const text = await scrape();
    expect(valueOf(text, 'subx_cache_requests_total{cache="metrics_test",result="hit"}')).toBe(1);
    expect(valueOf(text, 'subx_cache_requests_total{cache="metrics_test",result="miss"}')).toBe(1);
    expect(text).not.toContain('dQw4w9WgXcQ');
  });
});

describe('scrape-time sources', () => {
  it('a hanging or failing source neither blocks nor fails the scrape', async () => {
    const unregisterOutbox = registerOutboxBacklog(() => new Promise(() => {}));
    const unregisterLag = registerConsumerLag(() => Promise.reject(new Error('broker down')));
    const t0 = Date.now();
    const text = await scrape();
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(text).toContain('# TYPE subx_outbox_pending gauge');
    unregisterOutbox();
    unregisterLag();
  });

  it('reads the outbox once per scrape for both gauges, and reports lag by group and topic', async () => {
    let reads = 0;
    const unregisterOutbox = registerOutboxBacklog(async () => {
      reads += 1;
      return { pending: 7, oldestAgeSeconds: 42 };
    });
    const unregisterLag = registerConsumerLag(async () => [
      { groupId: 'metrics-test', topic: 'billing.credit-usage.v1', lag: 3 },
    ]);
    const text = await scrape();
    expect(reads).toBe(1);
    expect(valueOf(text, 'subx_outbox_pending')).toBe(7);
    expect(valueOf(text, 'subx_outbox_oldest_age_seconds')).toBe(42);
    expect(
      valueOf(text, 'subx_kafka_consumer_lag{group="metrics-test",topic="billing.credit-usage.v1"}'),
    ).toBe(3);
    unregisterLag();
    unregisterOutbox();
    // Gone from this process: the lag series disappears at the next scrape.
    expect(await scrape()).not.toContain('subx_kafka_consumer_lag{group="metrics-test"');
  });
});

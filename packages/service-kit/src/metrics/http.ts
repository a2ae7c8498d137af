/**
 * HTTP requests as the gateway answers them, the requests refused for a rate limit, and credits moved.
 * Names follow Prometheus conventions (`_total` counters, `_seconds` units); the catalogue is in
 * packages/service-kit/README.md, the alerts that read them in deploy/helm/subx/templates/prometheusrule.yaml.
 */
import { batchedHistogram } from './batched.ts';
import type { BatchedSeries } from './batched.ts';
import { counter } from './registry.ts';

// Constant strings: one per request would otherwise be built for the metrics' series key.
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;

/** '2xx' .. '5xx': errors are the 5xx (and 4xx) classes of the same series. */
export function statusClass(status: number): string {
  return STATUS_CLASS_NAMES[statusClassIndex(status)]!;
}
const STATUS_CLASS_NAMES = [...STATUS_CLASSES, 'other'] as const;
const statusClassIndex = (status: number): number =>
  status >= 100 && status < 600 ? Math.floor(status / 100) - 1 : STATUS_CLASSES.length;

const httpLabels = ['method', 'route', 'status_class'] as const;

// Every request records here: batched (batched.ts), the count read from the duration histogram.
const httpRequests = batchedHistogram(
  'subx_http_request_duration_seconds',
  'HTTP request duration from arrival to the last byte of the response.',
  httpLabels,
  {
    countAlsoAs: {
      name: 'subx_http_requests_total',
      help: 'HTTP requests served, by route pattern and status class.',
    },
  },
);

/**
 * One finished HTTP request. `route` is the router's pattern (`/api/v1/extract`), never the URL:
 * requests that matched no route are counted under 'unmatched'.
 */
export function observeHttpRequest(request: {
  method: string;
  route: string | undefined;
  status: number;
  seconds: number;
}): void {
  const route = request.route || 'unmatched';
  httpSeriesOf(request.method, route, request.status).record(request.seconds);
}

/**
 * The series of every request's recording, kept by route pattern, method and status class, so a
 * request finds its series by three lookups of strings it already has (the route's pattern and the
 * method are constants of the router and of node's parser), not by building and hashing a key.
 * Bounded: routes are the router's patterns (or 'unmatched'), methods the ones node parses.
 */
const httpSeries = new Map<string, Map<string, BatchedSeries[]>>();

function httpSeriesOf(method: string, route: string, status: number): BatchedSeries {
  let byMethod = httpSeries.get(route);
  if (byMethod === undefined) httpSeries.set(route, (byMethod = new Map()));
  let byClass = byMethod.get(method);
  if (byClass === undefined) byMethod.set(method, (byClass = []));
  const index = statusClassIndex(status);
  let series = byClass[index];
  if (series === undefined) {
    const status_class = STATUS_CLASS_NAMES[index]!;
    series = byClass[index] = httpRequests.series(`${method} ${route} ${status_class}`, () => ({
      method,
      route,
      status_class,
    }));
  }
  return series;
}

/** A request refused for a rate limit: `tier` of the account ('anonymous' for per-address limits). */
export function countRateLimitRejection(
  tier: string,
  limit: 'daily' | 'per_ip_minute' | 'account_reads_minute',
): void {
  counter('subx_rate_limit_rejections_total', 'Requests refused with 429 by a rate limit, by tier.', [
    'tier',
    'limit',
  ]).inc({ tier, limit });
}

/** Credits moved for an operation: reserved before the work, then charged and/or released. */
export function countCredits(
  operation: string,
  action: 'reserved' | 'charged' | 'released',
  credits: number,
): void {
  if (credits <= 0) return;
  counter(
    'subx_credits_total',
    'Credits reserved before work, charged for results and released back, by operation.',
    ['operation', 'action'],
  ).inc({ operation, action }, credits);
}

/**
 * The metrics subx records, by concern, as small functions the services call at the moment the
 * thing happens. Names follow Prometheus conventions (`_total` counters, `_seconds` units); the
 * catalogue with meanings is in packages/service-kit/README.md and the alerts that read them in
 * deploy/helm/subx/templates/prometheusrule.yaml.
 */
import { batchedCounter, batchedHistogram } from './batched.ts';
import type { BatchedSeries } from './batched.ts';
import { counter, gauge, histogram } from './registry.ts';

// ---------------------------------------------------------------------------------------------
// HTTP (gateway)

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

// ---------------------------------------------------------------------------------------------
// gRPC (server side in startGrpcServer, client side in unaryCall: every service gets both)

const grpcLabels = ['grpc_service', 'grpc_method'] as const;
const grpcCodeLabels = ['grpc_service', 'grpc_method', 'grpc_code'] as const;

function splitPath(path: string): { grpc_service: string; grpc_method: string } {
  // '/subx.extractor.v1.ExtractorService/GetTranscript'
  const [, service = 'unknown', method = 'unknown'] = path.split('/');
  return { grpc_service: service, grpc_method: method };
}

// Every call (and every item of a batch call) records here: batched (batched.ts).
const GRPC_METRICS = {
  server: {
    calls: batchedCounter(
      'subx_grpc_server_handled_total',
      'gRPC calls handled by this server, by method and status code.',
      grpcCodeLabels,
    ),
    time: batchedHistogram(
      'subx_grpc_server_handling_seconds',
      'gRPC handling time on the server, by method.',
      grpcLabels,
    ),
  },
  client: {
    calls: batchedCounter(
      'subx_grpc_client_handled_total',
      'gRPC calls made by this process, by method and status code.',
      grpcCodeLabels,
    ),
    time: batchedHistogram(
      'subx_grpc_client_handling_seconds',
      'gRPC call time seen by the caller, by method.',
      grpcLabels,
    ),
  },
};

/**
 * One finished unary call on either side (`startGrpcServer`, `unaryCall`): `path` is the method's
 * '/pkg.Service/Method', `code` the grpc status name.
 */
export function observeGrpcCall(
  side: 'server' | 'client',
  path: string,
  code: string,
  seconds: number,
): void {
  const method = grpcSeriesOf(side, path);
  let byCode = method.calls.get(code);
  if (byCode === undefined) {
    byCode = GRPC_METRICS[side].calls.series(`${path} ${code}`, () => ({
      ...splitPath(path),
      grpc_code: code,
    }));
    method.calls.set(code, byCode);
  }
  byCode.record(1);
  method.time.record(seconds);
}

/**
 * The series of each side's methods, by the method's path and then the status code: found by
 * lookups of strings the caller has (the paths are constants of the generated code), not by
 * building a key per call. Bounded: the services' methods, and grpc's status codes.
 */
const grpcSeries = {
  server: new Map<string, GrpcMethodSeries>(),
  client: new Map<string, GrpcMethodSeries>(),
};
interface GrpcMethodSeries {
  time: BatchedSeries;
  calls: Map<string, BatchedSeries>;
}

function grpcSeriesOf(side: 'server' | 'client', path: string): GrpcMethodSeries {
  let method = grpcSeries[side].get(path);
  if (method === undefined) {
    method = { time: GRPC_METRICS[side].time.series(path, () => splitPath(path)), calls: new Map() };
    grpcSeries[side].set(path, method);
  }
  return method;
}

// ---------------------------------------------------------------------------------------------
// Upstream (the video platform) and caches

/**
 * Speech-to-text (the extractor's TRANSCRIBE_*): seconds of audio transcribed, the model's time
 * per transcription, and failures by reason (the error code: TRANSCRIPTION_FAILED, NO_SPEECH, ...).
 */
export function transcriptionMetrics(): {
  transcribed(audioSeconds: number, modelSeconds: number): void;
  failed(reason: string): void;
} {
  const audio = counter(
    'subx_transcription_audio_seconds_total',
    'Seconds of audio transcribed by the speech-to-text model (cache hits not counted).',
    [],
  );
  const model = histogram(
    'subx_transcription_model_seconds',
    'Time the speech-to-text model took per transcription.',
    [],
    [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300],
  );
  const failures = counter('subx_transcription_failures_total', 'Transcriptions that failed, by reason.', [
    'reason',
  ]);
  return {
    transcribed: (audioSeconds, modelSeconds) => {
      audio.inc(audioSeconds);
      model.observe(modelSeconds);
    },
    failed: (reason) => failures.inc({ reason }),
  };
}

// Every cache lookup records here: batched (batched.ts).
const cacheLookups = batchedCounter(
  'subx_cache_requests_total',
  'Cache lookups, by cache and result (hit or miss).',
  ['cache', 'result'],
);

/** One cache lookup: `cache` is the cache's name (transcript, metadata, comments, summary, ...). */
export function countCacheLookup(cache: string, hit: boolean): void {
  const result = hit ? 'hit' : 'miss';
  let byResult = cacheSeries.get(cache);
  if (byResult === undefined) {
    const seriesOf = (result: string) => cacheLookups.series(`${cache} ${result}`, () => ({ cache, result }));
    cacheSeries.set(cache, (byResult = { hit: seriesOf('hit'), miss: seriesOf('miss') }));
  }
  byResult[result].record(1);
}

/** The two series of each cache (bounded: caches are named in the code). */
const cacheSeries = new Map<string, { hit: BatchedSeries; miss: BatchedSeries }>();

/**
 * A `createJsonCache({ onLookup })` hook: the cache is named by the key's first segment
 * (`transcript:v1:<id>` → transcript), which the code chooses, so the label stays bounded.
 */
export function cacheLookupMetrics(): (key: string, hit: boolean) => void {
  return (key, hit) => countCacheLookup(key.split(':', 1)[0] || 'unnamed', hit);
}

// ---------------------------------------------------------------------------------------------
// Event bus, fan-out, outbox, billing

/**
 * What the event-bus adapters of @subx/ports report (their `BusObserver`): published messages by
 * topic, handled deliveries by topic, group and outcome, and dead-lettered messages.
 */
export function busMetrics(): {
  published(topic: string, count: number): void;
  handled(topic: string, groupId: string, outcome: 'ok' | 'retry' | 'failed'): void;
  deadLettered(topic: string, groupId: string): void;
  consumerRevived(groupId: string): void;
  lagSource(read: () => Promise<LagReport>): void;
} {
  const produced = counter(
    'subx_bus_messages_produced_total',
    'Messages published to the event bus, by topic.',
    ['topic'],
  );
  const consumed = counter(
    'subx_bus_messages_consumed_total',
    'Deliveries handled by consumers, by topic, group and outcome (ok, retry, failed).',
    ['topic', 'group', 'outcome'],
  );
  const dlq = counter(
    'subx_bus_dead_lettered_total',
    'Messages moved to <topic>.dlq after their last failed attempt, by topic and group.',
    ['topic', 'group'],
  );
  const revived = counter(
    'subx_bus_consumer_restarts_total',
    'Consumers started again by the adapter after kafkajs gave up on them (a crash it does not restart), by group.',
    ['group'],
  );
  return {
    published: (topic, count) => produced.inc({ topic }, count),
    consumerRevived: (group) => revived.inc({ group }),
    handled: (topic, group, outcome) => consumed.inc({ topic, group, outcome }),
    deadLettered: (topic, group) => dlq.inc({ topic, group }),
    lagSource: (read) => void registerConsumerLag(read),
  };
}

type LagReport = readonly { groupId: string; topic: string; lag: number }[];
const lagSources = new Set<() => Promise<LagReport>>();

/** A scrape-time read must neither hang nor fail the scrape: bounded, and failures read as absent. */
async function bounded<T>(read: () => Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      read(),
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), ms);
      }),
    ]);
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

/** Consumer lag, read at scrape time from `source` (the Kafka adapter's `consumerLag`), 2 s bound. */
export function registerConsumerLag(source: () => Promise<LagReport>): () => void {
  lagSources.add(source);
  gauge(
    'subx_kafka_consumer_lag',
    'Messages behind the partition end for the consumer groups of this process, by group and topic.',
    ['group', 'topic'],
    async function collect() {
      const reports = await Promise.all([...lagSources].map((s) => bounded(s, 2_000)));
      this.reset();
      for (const { groupId, topic, lag } of reports.flatMap((r) => r ?? [])) {
        this.set({ group: groupId, topic }, lag);
      }
    },
  );
  return () => lagSources.delete(source);
}

/** Batch/playlist items answered TIMEOUT: `fanout` is 'bus' (Kafka jobs) or 'direct' (gRPC calls). */
export function countFanOutDeadlineMissed(fanout: 'bus' | 'direct', items: number): void {
  if (items <= 0) return;
  counter(
    'subx_fanout_deadline_missed_total',
    'Batch/playlist items that had no result by their deadline, by fan-out path.',
    ['fanout'],
  ).inc({ fanout }, items);
}

// ---------------------------------------------------------------------------------------------
// Webhooks (gateway, services/gateway/src/webhooks)

/**
 * One webhook delivery attempt: `outcome` is how it ended (delivered, http_error, redirect,
 * timeout, network_error, refused: the target policy said no), with its duration.
 */
export function observeWebhookAttempt(outcome: string, seconds: number): void {
  counter('subx_webhook_attempts_total', 'Webhook delivery attempts, by how each ended.', ['outcome']).inc({
    outcome,
  });
  histogram(
    'subx_webhook_attempt_duration_seconds',
    'Duration of one webhook delivery attempt (target check, connection and answer).',
    ['outcome'],
  ).observe({ outcome }, seconds);
}

/** A webhook delivery that ended: delivered (a 2xx), or failed (retries exhausted, 410, target refused). */
export function countWebhookDelivery(outcome: 'delivered' | 'failed'): void {
  counter('subx_webhook_deliveries_total', 'Webhook deliveries that ended, by outcome.', ['outcome']).inc({
    outcome,
  });
}

interface OutboxBacklog {
  pending: number;
  oldestAgeSeconds: number;
}
let outboxSource: (() => Promise<OutboxBacklog>) | undefined;
let outboxRead: Promise<OutboxBacklog | undefined> | undefined;

/**
 * One read per scrape for both gauges (a scrape starts every metric's collect before awaiting any,
 * so the second gauge joins the first one's read), bounded at 2 s; a failed read leaves the last values.
 */
function readOutbox(): Promise<OutboxBacklog | undefined> {
  const source = outboxSource;
  if (!source) return Promise.resolve(undefined);
  outboxRead ??= bounded(source, 2_000).finally(() => {
    outboxRead = undefined;
  });
  return outboxRead;
}

/** Outbox backlog, read at scrape time: entries not yet published and the age of the oldest. */
export function registerOutboxBacklog(source: () => Promise<OutboxBacklog>): () => void {
  outboxSource = source;
  outboxRead = undefined;
  gauge(
    'subx_outbox_pending',
    'Outbox entries (credit-usage events and request-usage reports) committed but not yet published.',
    [],
    async function () {
      const backlog = await readOutbox();
      if (backlog) this.set(backlog.pending);
    },
  );
  gauge(
    'subx_outbox_oldest_age_seconds',
    'Age of the oldest outbox entry not yet published (0 when none).',
    [],
    async function () {
      const backlog = await readOutbox();
      if (backlog) this.set(backlog.oldestAgeSeconds);
    },
  );
  return () => {
    if (outboxSource === source) outboxSource = undefined;
  };
}

export function countBillingEvent(result: 'applied' | 'duplicate' | 'rejected'): void {
  counter(
    'subx_billing_events_total',
    'Credit-usage events seen by the billing ledger: applied, duplicate (deduplicated) or rejected.',
    ['result'],
  ).inc({ result });
}

/**
 * Bulk jobs (services/gateway/src/jobs): jobs ending by status, items by outcome (ok or the error
 * code, a bounded set), and the jobs this gateway's runner holds now. No job or account ids.
 */
export function jobMetrics(): {
  finished(status: string): void;
  items(outcome: string, count: number): void;
  running(count: number): void;
} {
  const finished = counter('subx_jobs_finished_total', 'Bulk jobs that ended, by status.', ['status']);
  const items = counter(
    'subx_job_items_total',
    'Items of bulk jobs with a result, by outcome (ok or error code).',
    ['outcome'],
  );
  const running = gauge('subx_jobs_running', "Bulk jobs this gateway's runner is working on now.", []);
  return {
    finished: (status) => finished.inc({ status }),
    items: (outcome, count) => items.inc({ outcome }, count),
    running: (count) => running.set({}, count),
  };
}

/**
 * CloudEvents 1.0 in Kafka binary content mode on every topic we produce: the payload stays the raw
 * protobuf message, the attributes travel as `ce_*` headers (written by the `cloudevents` package's
 * Kafka binding, not by hand) plus `content-type: application/protobuf`. One entry per topic says
 * what its events are: who produces them (`ce_source`), their type (`ce_type`) and the protobuf
 * message they carry (`ce_dataschema`). docs/events.md describes the headers for consumers.
 */
import { BinaryReader } from '@bufbuild/protobuf/wire';
import { CloudEvent, Kafka } from 'cloudevents';
import { EventEnvelope } from './gen/subx/events/v1/envelope.ts';
import type { TOPICS } from './topics.ts';

/** What one topic's events are, as CloudEvents attributes. */
export interface CloudEventKind {
  /** `ce_source`: `//subx/<service>`, the producing service. */
  readonly source: string;
  /** `ce_type`: `com.subx.<event>.v1`. */
  readonly type: string;
  /**
   * `ce_dataschema`: the payload's protobuf message, `proto:` + its fully qualified name (the
   * attribute must be an absolute URI; the name alone is not one, and strict SDKs refuse it).
   */
  readonly dataschema: string;
  /** What `ce_subject` names for this topic (documentation; the producer fills it in). */
  readonly subject: string;
}

export const PROTOBUF_CONTENT_TYPE = 'application/protobuf';

export const CLOUD_EVENT_KINDS = {
  creditUsage: {
    source: '//subx/gateway',
    type: 'com.subx.credit-usage.v1',
    dataschema: 'proto:subx.events.v1.CreditUsage',
    subject: 'account id',
  },
  requestUsage: {
    source: '//subx/gateway',
    type: 'com.subx.request-usage.v1',
    dataschema: 'proto:subx.events.v1.RequestUsage',
    subject: 'account id',
  },
  extractJobs: {
    source: '//subx/gateway',
    type: 'com.subx.extract-job.v1',
    dataschema: 'proto:subx.events.v1.ExtractJob',
    subject: 'job: <correlation id>/<item index>',
  },
  extractBulkJobs: {
    source: '//subx/gateway',
    type: 'com.subx.extract-job.v1',
    dataschema: 'proto:subx.events.v1.ExtractJob',
    subject: 'job: <correlation id>/<item index>',
  },
  extractResults: {
    source: '//subx/extractor',
    type: 'com.subx.extract-result.v1',
    dataschema: 'proto:subx.events.v1.ExtractResult',
    subject: 'job: <correlation id>/<item index>',
  },
  jobEvents: {
    source: '//subx/gateway',
    type: 'com.subx.job-lifecycle.v1',
    dataschema: 'proto:subx.events.v1.JobLifecycleEvent',
    subject: 'bulk job id',
  },
  watchEvents: {
    source: '//subx/gateway',
    type: 'com.subx.watch-lifecycle.v1',
    dataschema: 'proto:subx.events.v1.WatchLifecycleEvent',
    subject: 'watch id',
  },
  auditEvents: {
    source: '//subx/gateway',
    type: 'com.subx.audit.v1',
    dataschema: 'proto:subx.events.v1.AuditEvent',
    subject: 'account id',
  },
  accountEvents: {
    source: '//subx/gateway',
    type: 'com.subx.account-deleted.v1',
    dataschema: 'proto:subx.events.v1.AccountDeleted',
    subject: 'account id',
  },
} as const satisfies Record<keyof typeof TOPICS, CloudEventKind>;

export interface CloudEventFacts {
  /** `ce_id`: the event's own id (its envelope's `event_id`), the same on every re-publish. */
  id: string;
  /** `ce_time`: when it happened, RFC 3339 (the envelope's `occurred_at`). */
  time: string;
  /** `ce_subject`: the account or the job the event is about; omitted when empty. */
  subject: string;
}

/**
 * The Kafka headers of one event in binary mode: `ce_specversion`, `ce_id`, `ce_source`,
 * `ce_type`, `ce_time`, `ce_subject`, `ce_dataschema` and `content-type`. Throws on an empty id or
 * an invalid time (a producer bug, never input).
 */
export function cloudEventHeaders(kind: CloudEventKind, facts: CloudEventFacts): Record<string, string> {
  // The binding would invent a random id for an empty one: a re-publish would then look new.
  if (!facts.id) throw new TypeError(`${kind.type}: an event needs its own id`);
  const event = new CloudEvent<Uint8Array>({
    specversion: '1.0',
    id: facts.id,
    source: kind.source,
    type: kind.type,
    time: facts.time,
    ...(facts.subject ? { subject: facts.subject } : {}),
    dataschema: kind.dataschema,
    datacontenttype: PROTOBUF_CONTENT_TYPE,
  });
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(Kafka.binary(event).headers)) {
    // The binding also writes `ce_datacontenttype`; binary mode carries it as `content-type` only.
    if (value === undefined || value === null || name === 'ce_datacontenttype') continue;
    headers[name] = String(value);
  }
  return headers;
}

/**
 * The envelope of any event message: every message of `subx.events.v1` carries `EventEnvelope` as
 * field 1, so a relay that only holds the bytes can still read the id and time. Undefined when the
 * bytes hold no envelope (or are not protobuf).
 */
export function envelopeOf(payload: Uint8Array): EventEnvelope | undefined {
  try {
    const reader = new BinaryReader(payload);
    while (reader.pos < reader.len) {
      const [field, wireType] = reader.tag();
      if (field === 1 && wireType === 2) return EventEnvelope.decode(reader.bytes());
      reader.skip(wireType);
    }
  } catch {
    return undefined;
  }
  return undefined;
}

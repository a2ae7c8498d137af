import { describe, expect, it } from 'vitest';
import { CLOUD_EVENT_KINDS, cloudEventHeaders, envelopeOf } from './cloud-events.ts';
import { TOPICS } from './topics.ts';
import { JobLifecycleEvent } from './gen/subx/events/v1/job_lifecycle.ts';
import { RequestUsage } from './gen/subx/events/v1/request_usage.ts';

const envelope = {
  eventId: '0b5c8f0e-5d2a-4b7e-9a51-3f2c1d0e9a77',
  occurredAt: '2026-03-15T10:00:00.000Z',
  accountId: 'acct-1',
  idempotencyKey: 'idem-1',
  traceParent: '',
};

describe('CloudEvents binary-mode headers', () => {
  it('describes every topic, with a type and protobuf message per event', () => {
    expect(Object.keys(CLOUD_EVENT_KINDS).sort()).toEqual(Object.keys(TOPICS).sort());
    for (const kind of Object.values(CLOUD_EVENT_KINDS)) {
      expect(kind.source).toMatch(/^\/\/subx\/[a-z]+$/);
      expect(kind.type).toMatch(/^com\.subx\.[a-z-]+\.v1$/);
      expect(kind.dataschema).toMatch(/^proto:subx\.events\.v1\.[A-Z][A-Za-z]+$/);
    }
  });

  it('writes exactly the binary-mode attributes, the same for the same event', () => {
    const facts = { id: envelope.eventId, time: envelope.occurredAt, subject: 'acct-1' };
    const headers = cloudEventHeaders(CLOUD_EVENT_KINDS.requestUsage, facts);
    expect(headers).toEqual({
      ce_specversion: '1.0',
      ce_id: envelope.eventId,
      ce_source: '//subx/gateway',
      ce_type: 'com.subx.request-usage.v1',
      ce_time: envelope.occurredAt,
      ce_subject: 'acct-1',
      ce_dataschema: 'proto:subx.events.v1.RequestUsage',
      'content-type': 'application/protobuf',
    });
    // A re-publish (outbox relay after a crash) carries the same attributes.
    expect(cloudEventHeaders(CLOUD_EVENT_KINDS.requestUsage, facts)).toEqual(headers);
    // No subject, no header (extract jobs of an anonymous request have no account).
    expect(cloudEventHeaders(CLOUD_EVENT_KINDS.requestUsage, { ...facts, subject: '' })).not.toHaveProperty(
      'ce_subject',
    );
  });

  it('refuses an event without id or with a time that is not RFC 3339', () => {
    const kind = CLOUD_EVENT_KINDS.creditUsage;
    expect(() => cloudEventHeaders(kind, { id: '', time: envelope.occurredAt, subject: 'a' })).toThrow();
    expect(() => cloudEventHeaders(kind, { id: 'x', time: 'yesterday', subject: 'a' })).toThrow();
  });

  it('reads the envelope of any event message, and nothing from other bytes', () => {
    const lifecycle = JobLifecycleEvent.encode({
      envelope,
      jobId: 'job-1',
      type: 'job.created',
      status: 'queued',
      progress: { total: 1, succeeded: 0, failed: 0, pending: 1 },
      creditsCharged: 0n,
      sourceType: 'urls',
      errorCode: '',
    }).finish();
    expect(envelopeOf(lifecycle)).toEqual(envelope);
    const usage = RequestUsage.encode({
      envelope,
      date: '2026-03-15',
      source: 's',
      sequence: 1n,
      operations: [],
    });
    expect(envelopeOf(usage.finish())?.eventId).toBe(envelope.eventId);
    expect(envelopeOf(new TextEncoder().encode('payload a'))).toBeUndefined();
    expect(envelopeOf(new Uint8Array())).toBeUndefined();
  });
});

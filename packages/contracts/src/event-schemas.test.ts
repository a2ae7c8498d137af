import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { eventDescriptors, eventMessageType, topicSchemas } from './event-schemas.ts';
import { CreditUsage } from './gen/subx/events/v1/credit_usage.ts';
import { ExtractResult } from './gen/subx/events/v1/extract_job.ts';
import { TOPICS } from './topics.ts';

describe('event schemas for a schema registry', () => {
  const descriptors = eventDescriptors();

  it('holds the message of every topic', () => {
    for (const key of Object.keys(TOPICS) as (keyof typeof TOPICS)[]) {
      const type = eventMessageType(key);
      expect(type).toMatch(/^subx\.events\.v1\.[A-Z]/);
      expect(descriptors.getMessage(type), type).toBeDefined();
    }
  });

  it('describes the bytes ts-proto writes: decoded and encoded again, the same bytes', () => {
    const payload = CreditUsage.encode({
      envelope: {
        eventId: 'ev-1',
        occurredAt: '2026-03-15T10:00:00.000Z',
        accountId: 'acct-1',
        idempotencyKey: 'idem-1',
        traceParent: '',
      },
      operation: 'batch',
      credits: 7n,
      requestId: 'req-1',
      successfulItems: 3,
      attemptedItems: 4,
      attributes: { video: 'dQw4w9WgXcQ' },
    }).finish();
    const desc = descriptors.getMessage('subx.events.v1.CreditUsage')!;
    const decoded = fromBinary(desc, payload) as unknown as Record<string, unknown>;
    expect(decoded).toMatchObject({
      operation: 'batch',
      credits: 7n,
      requestId: 'req-1',
      successfulItems: 3,
      attemptedItems: 4,
      attributes: { video: 'dQw4w9WgXcQ' },
      envelope: { eventId: 'ev-1', accountId: 'acct-1' },
    });
    expect(toBinary(desc, create(desc, decoded))).toEqual(payload);

    // The second message of its file (message index 1 in the registry's wire format).
    const result = ExtractResult.encode(
      ExtractResult.fromPartial({ correlationId: 'c-1', itemIndex: 2 }),
    ).finish();
    const resultDesc = descriptors.getMessage('subx.events.v1.ExtractResult')!;
    expect(resultDesc.file.messages.indexOf(resultDesc)).toBe(1);
    expect(fromBinary(resultDesc, result)).toMatchObject({ correlationId: 'c-1', itemIndex: 2 });
  });

  it('lists the topics a service produces under their configured names', () => {
    expect(topicSchemas({ creditUsage: 'usage-a', extractResults: 'results-b', jobEvents: '' })).toEqual([
      { topic: 'usage-a', messageType: 'subx.events.v1.CreditUsage' },
      { topic: 'results-b', messageType: 'subx.events.v1.ExtractResult' },
    ]);
  });
});

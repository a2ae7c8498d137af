/**
 * The CloudEvents part of the event bus contract (contract.ts runs it against every adapter): a
 * message in the Kafka binding's binary mode, as our producers write it
 * (`@subx/contracts`' `cloudEventHeaders`), arrives with its headers and payload intact, and the
 * `cloudevents` package reads the same event back from what a consumer receives.
 */
import { expect, it } from 'vitest';
import { Kafka } from 'cloudevents';
import type { CloudEventV1, KafkaMessage } from 'cloudevents';
import { randomUUID } from 'node:crypto';
import { CLOUD_EVENT_KINDS, cloudEventHeaders, creditUsageV1 } from '@subx/contracts';
import type { BusMessage, DeliveredMessage } from './port.ts';

export interface CloudEventsContractContext {
  publish(topic: string, messages: readonly BusMessage[]): Promise<void>;
  newTopic(): Promise<string>;
  /** Subscribes a fresh group to the topic; the array fills as messages arrive. */
  collect(topic: string): Promise<DeliveredMessage[]>;
  until(predicate: () => boolean, message: string): Promise<void>;
}

export function itCarriesCloudEvents({
  publish,
  newTopic,
  collect,
  until,
}: CloudEventsContractContext): void {
  it('carries CloudEvents binary mode: the Kafka binding reads back the event, payload unchanged', async () => {
    const topic = await newTopic();
    const got = await collect(topic);
    const envelope = {
      eventId: randomUUID(),
      occurredAt: '2026-03-15T10:00:00.000Z',
      accountId: 'acct-1',
      idempotencyKey: '',
      traceParent: '',
    };
    const payload = creditUsageV1.CreditUsage.encode({
      envelope,
      operation: 'extract',
      credits: 7n,
      requestId: 'req-1',
      successfulItems: 1,
      attemptedItems: 1,
      attributes: {},
    }).finish();
    const headers = cloudEventHeaders(CLOUD_EVENT_KINDS.creditUsage, {
      id: envelope.eventId,
      time: envelope.occurredAt,
      subject: envelope.accountId,
    });
    await publish(topic, [{ key: 'acct-1', value: payload, headers: { ...headers, traceparent: 'tp' } }]);
    await until(() => got.length === 1, 'the event');

    const message = got[0]!;
    expect(message.headers).toEqual({ ...headers, traceparent: 'tp' });
    const received: KafkaMessage<Buffer> = {
      key: message.key ?? '',
      value: Buffer.from(message.value),
      body: Buffer.from(message.value),
      headers: message.headers,
    };
    const event = Kafka.toEvent(received) as CloudEventV1<Uint8Array>;
    expect(event).toMatchObject({
      specversion: '1.0',
      id: envelope.eventId,
      source: '//subx/gateway',
      type: 'com.subx.credit-usage.v1',
      subject: 'acct-1',
      time: envelope.occurredAt,
      dataschema: 'proto:subx.events.v1.CreditUsage',
      datacontenttype: 'application/protobuf',
    });
    // The payload is the raw protobuf message: a consumer that ignores the headers still decodes it.
    expect(Array.from(message.value)).toEqual(Array.from(payload));
    expect(creditUsageV1.CreditUsage.decode(message.value).credits).toBe(7n);
  });
}

/**
 * Forwards credit usage to a CloudEvents HTTP ingest (METERING_INGEST_URL; OpenMeter's
 * `POST /api/v1/events` shape: a JSON array of structured CloudEvents,
 * `content-type: application/cloudevents-batch+json`).
 *
 * - At least once: a consumer group of its own on the credit-usage topic; a message is committed only
 *   after the ingest accepted the batch holding it (2xx). A crash or restart re-sends what was not
 *   accepted, with the same `id`.
 * - Deduplicated by `id` (the event's `ce_id`): within a batch here, across redeliveries at the
 *   receiver (OpenMeter dedupes on id and source).
 * - Batched: the member handles up to `batchSize` messages at once (`perPartitionConcurrency`); they
 *   wait at most `lingerMs` for each other and go out in one request.
 * - Back-off: a network error, a timeout, 408, 429 or 5xx fails the batch with `RetryableError`; the
 *   bus redelivers with its back-off (doubling, capped) and the partition waits, without limit.
 * - Dead letters: any other answer (the ingest refuses the events for good) fails the batch with a
 *   plain error; the bus dead-letters each message to `<topic>.dlq` (counted in
 *   `subx_bus_dead_lettered_total{group}`) and moves on.
 */
import { Kafka } from 'cloudevents';
import type { KafkaMessage } from 'cloudevents';
import { creditUsageV1 } from '@subx/contracts';
import type { DeliveredMessage, EventBus, Logger, Subscription } from '@subx/ports';
import { RetryableError } from '@subx/ports';

export interface MeteringExportOptions {
  bus: EventBus;
  url: string;
  /** Sent as `Authorization: Bearer <token>` when set. */
  token?: string;
  topic: string;
  groupId: string;
  /** Events per request at most. Default 100. */
  batchSize?: number;
  /** How long the first event of a batch waits for more. Default 200 ms. */
  lingerMs?: number;
  /** Bound of one request. Default 10 s. */
  requestTimeoutMs?: number;
  logger: Pick<Logger, 'warn'>;
}

/** One structured CloudEvent as the ingest takes it: the attributes and the usage as JSON data. */
export interface MeteringEvent {
  specversion: string;
  id: string;
  source: string;
  type: string;
  subject: string;
  time: string;
  datacontenttype: 'application/json';
  data: {
    operation: string;
    credits: number;
    request_id: string;
    successful_items: number;
    attempted_items: number;
  };
}

/** The structured event of one binary-mode message (headers from the producer, payload decoded). */
export function meteringEventOf(message: DeliveredMessage): MeteringEvent {
  const kafka: KafkaMessage<Buffer> = {
    key: message.key ?? '',
    value: Buffer.from(message.value),
    body: Buffer.from(message.value),
    headers: message.headers,
  };
  const event = Kafka.toEvent(kafka);
  if (Array.isArray(event)) throw new Error('a batch of CloudEvents where one binary event was expected');
  const usage = creditUsageV1.CreditUsage.decode(message.value);
  return {
    specversion: event.specversion,
    id: event.id,
    source: event.source,
    type: event.type,
    subject: event.subject ?? usage.envelope?.accountId ?? '',
    time: event.time ?? usage.envelope?.occurredAt ?? '',
    datacontenttype: 'application/json',
    data: {
      operation: usage.operation,
      credits: Number(usage.credits),
      request_id: usage.requestId,
      successful_items: usage.successfulItems,
      attempted_items: usage.attemptedItems,
    },
  };
}

interface Waiting {
  event: MeteringEvent;
  settle(error?: Error): void;
}

export async function startMeteringExport(options: MeteringExportOptions): Promise<Subscription> {
  const batchSize = options.batchSize ?? 100;
  const lingerMs = options.lingerMs ?? 200;
  const requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
  let pending: Waiting[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;

  async function send(batch: Waiting[]): Promise<void> {
    // One entry per id: a redelivery that meets its first copy in the same batch goes once.
    const unique = [...new Map(batch.map((w) => [w.event.id, w.event])).values()];
    let failure: Error | undefined;
    try {
      const response = await fetch(options.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/cloudevents-batch+json',
          ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
        },
        body: JSON.stringify(unique),
        signal: AbortSignal.timeout(requestTimeoutMs),
      });
      await response.body?.cancel();
      const status = response.status;
      if (status >= 200 && status < 300) failure = undefined;
      else if (status === 408 || status === 429 || status >= 500) {
        failure = new RetryableError(`metering ingest answered ${status}`);
      } else failure = new Error(`metering ingest refused the events: ${status}`);
    } catch (error) {
      failure = new RetryableError('metering ingest unreachable', { cause: error });
    }
    if (failure)
      options.logger.warn({ err: failure, events: unique.length }, 'metering export: batch failed');
    for (const waiting of batch) waiting.settle(failure);
  }

  function flush(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const batch = pending;
    pending = [];
    if (batch.length > 0) void send(batch);
  }

  await options.bus.ensureTopics([options.topic]);
  return options.bus.subscribe({
    groupId: options.groupId,
    topics: [options.topic],
    fromBeginning: true,
    perPartitionConcurrency: batchSize,
    maxInFlight: batchSize,
    // A refused batch is refused for good: dead-letter at once rather than ask again.
    maxAttempts: 1,
    handler: (message) =>
      new Promise<void>((resolve, reject) => {
        let event: MeteringEvent;
        try {
          event = meteringEventOf(message);
        } catch (error) {
          reject(new Error(`not a credit-usage CloudEvent: ${(error as Error).message}`));
          return;
        }
        pending.push({ event, settle: (error) => (error ? reject(error) : resolve()) });
        if (pending.length >= batchSize) flush();
        else timer ??= setTimeout(flush, lingerMs);
      }),
  });
}

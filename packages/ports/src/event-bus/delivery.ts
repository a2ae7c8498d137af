/**
 * One message's delivery, the same in every adapter: the handler runs, a RetryableError is retried
 * without counting, other failures count up to `maxAttempts` and then dead-letter the message to
 * `<topic>.dlq` (its headers plus where it came from and why it failed), with the backoff of
 * shared.ts between attempts. The adapter says how a handler runs, how a dead letter is published
 * and how a backoff is waited out (or given up on).
 */
import { RetryableError, type BusMessage, type BusObserver, type DeliveredMessage } from './port.ts';
import { deadLetterErrorMessage, redeliveryDelay, type RetryBackoff } from './shared.ts';

/** What `runHandler` returns when the member crashed while the handler ran: abandon the message. */
export const CRASHED = Symbol('crashed');

/**
 * How one delivery ended: handled, dead-lettered, given up between attempts (stop, rebalance), or
 * abandoned by a crash.
 */
export type DeliveryOutcome = 'handled' | 'dead-lettered' | 'interrupted' | 'crashed';

export interface Delivery {
  topic: string;
  partition: number;
  offset: string;
  groupId: string;
  key: string | null;
  value: Uint8Array;
  headers: Record<string, string>;
  maxAttempts: number;
  retryBackoff: Required<RetryBackoff>;
  observer: BusObserver | undefined;
  /** Checked before each attempt: false hands the message to whoever owns it next. */
  stillOwned?(): boolean;
  /** Runs the handler once: null when it resolved, its error, or CRASHED. */
  runHandler(message: DeliveredMessage): Promise<unknown>;
  publishDeadLetter(message: BusMessage): Promise<void> | void;
  /** Waits out a backoff: 'crashed' or 'interrupted' ends the delivery there. */
  waitBackoff(ms: number): Promise<'done' | 'interrupted' | 'crashed'>;
  /** A counted failure that will be retried (the adapter may log it). */
  onFailure?(error: unknown, attempt: number): void;
}

/** Delivers one message until it is handled, dead-lettered, or the member lets go of it. */
export async function deliver(delivery: Delivery): Promise<DeliveryOutcome> {
  const { topic, partition, offset, groupId, key, value, headers, observer } = delivery;
  let failures = 0;
  for (let attempt = 1; ; attempt++) {
    if (delivery.stillOwned && !delivery.stillOwned()) return 'interrupted';
    const error = await delivery.runHandler({
      topic,
      partition,
      offset,
      key,
      // Copies, so a handler that changes what it got cannot change the next attempt.
      value: new Uint8Array(value),
      headers: { ...headers },
      attempt,
    });
    if (error === CRASHED) return 'crashed';
    observer?.handled?.(
      topic,
      groupId,
      error === null ? 'ok' : error instanceof RetryableError ? 'retry' : 'failed',
    );
    if (error === null) return 'handled';
    if (!(error instanceof RetryableError)) {
      failures++;
      if (failures >= delivery.maxAttempts) {
        observer?.deadLettered?.(topic, groupId);
        await delivery.publishDeadLetter(deadLetterOf(delivery, error));
        return 'dead-lettered';
      }
      delivery.onFailure?.(error, attempt);
    }
    const waited = await delivery.waitBackoff(redeliveryDelay(delivery.retryBackoff, attempt));
    if (waited !== 'done') return waited;
  }
}

/** The dead letter of a message: its key, value and headers, plus where it came from and why. */
function deadLetterOf(delivery: Delivery, error: unknown): BusMessage {
  return {
    key: delivery.key,
    value: delivery.value,
    headers: {
      ...delivery.headers,
      'x-error-message': deadLetterErrorMessage(error),
      'x-original-topic': delivery.topic,
      'x-original-partition': String(delivery.partition),
      'x-original-offset': delivery.offset,
    },
  };
}

/** Small helpers of the Kafka adapter: bounded waits, kafkajs's retryability, header decoding. */
import type { IHeaders } from 'kafkajs';
import { backoffDelay } from '../../backoff.ts';

const RETRY_ATTEMPTS = 8;

/** Retries kafkajs errors the protocol marks retryable (coordinator loading, leader moved, ...). */
export async function retrying<T>(operation: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      // kafkajs's own field, spelt `retriable`
      const retryable = (error as { retriable?: boolean }).retriable === true;
      if (!retryable || attempt >= RETRY_ATTEMPTS) throw error;
      await new Promise((resolve) =>
        setTimeout(resolve, backoffDelay({ baseMs: 100, maxMs: 1_000 }, attempt)),
      );
    }
  }
}

/**
 * Errors of ours marked the way kafkajs judges retryability (its own field, spelt `retriable: true`,
 * on the innermost error, so no `cause`). Not a `KafkaJSError` instance: kafkajs is CommonJS and its
 * error classes are not named exports Node's ESM loader can see.
 */
export function asKafkaRetryable(error: unknown): Error {
  if (error instanceof Error && error.name.startsWith('KafkaJS')) return error;
  const message = error instanceof Error ? error.message : String(error);
  return Object.assign(new Error(`while handling a message: ${message}`), {
    name: 'SubxHandlingError',
    retriable: true,
  });
}

export function toStringHeaders(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, raw] of Object.entries(headers ?? {})) {
    const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
    if (value === undefined) continue;
    out[name] = typeof value === 'string' ? value : value.toString('utf8');
  }
  return out;
}

export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

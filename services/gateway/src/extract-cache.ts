/**
 * The gateway's micro-cache of recent extract answers (README, "Extract micro-cache"). A hot video's answer was
 * paying a gRPC round trip, the protobuf decode of every segment, the JSON mapping and
 * serialisation on every request; the profile of scripts/bench/gateway-extract.ts put those at
 * well over half of the gateway's CPU per request. A hit here serves the already serialised
 * response instead.
 *
 * What is stored is the response as sent, minus the per-request tail: for json, the body up to and
 * including `extracted_at` (and `translated_from`) with `cached: true`; `rate_limit` and
 * `request_id` are appended per request, so the bytes are those `JSON.stringify` gives for the
 * uncached body. For srt/vtt/txt/md the document itself (it has no per-request fields).
 *
 * Bounded by bytes (an approximation: the UTF-16 size of the stored strings and key) and by age
 * (TTL); least recently used entries go first. `lru-cache` does both (maintained, no dependencies).
 * Admission, the daily limit and credits run before the handler, so a hit is counted and charged
 * exactly as a miss.
 */
import { LRUCache } from 'lru-cache';
import type { OutputFormat } from '@subx/formats';
import type { Clock } from '@subx/ports';
import type { IncludeField } from './schemas/common.ts';

/** What selects one answer: every request field that changes the response's bytes. */
export interface ExtractCacheKey {
  videoId: string;
  language: string;
  include: readonly IncludeField[];
  translate: boolean;
  format: OutputFormat;
  includeTimestamps: boolean;
}

export interface CachedExtract {
  /** The content type to send. */
  contentType: string;
  /**
   * json: the serialised body without its closing brace and per-request fields; other formats:
   * the whole document.
   */
  payload: string;
}

export interface ExtractCache {
  get(key: ExtractCacheKey): CachedExtract | undefined;
  set(key: ExtractCacheKey, value: CachedExtract): void;
  /** Entries and their approximate bytes (tests, metrics). */
  stats(): { entries: number; bytes: number };
}

export interface ExtractCacheOptions {
  ttlMs: number;
  maxBytes: number;
  clock: Clock;
}

// Fixed per-entry overhead of the LRU's slots and the two objects, so many tiny entries cannot
// exceed the cap either.
const ENTRY_OVERHEAD_BYTES = 128;

const keyOf = (k: ExtractCacheKey) =>
  `${k.videoId}\n${k.language}\n${k.include.join(',')}\n${k.translate ? 1 : 0}\n${k.format}\n${k.includeTimestamps ? 1 : 0}`;

/** The micro-cache, or undefined when `maxBytes` or `ttlMs` is 0 (disabled). */
export function createExtractCache(options: ExtractCacheOptions): ExtractCache | undefined {
  if (options.maxBytes <= 0 || options.ttlMs <= 0) return undefined;
  const lru = new LRUCache<string, CachedExtract>({
    maxSize: options.maxBytes,
    sizeCalculation: (value, key) =>
      2 * (value.payload.length + value.contentType.length + key.length) + ENTRY_OVERHEAD_BYTES,
    ttl: options.ttlMs,
    // An entry is never served past its TTL; expired entries are dropped when looked at or evicted
    // by size, so no timer per entry (ttlAutopurge) is needed.
    allowStale: false,
    // Read the clock at every check (the default caches it for 1 ms on a timer).
    ttlResolution: 0,
    perf: { now: () => options.clock.now() },
  });
  return {
    get: (key) => lru.get(keyOf(key)),
    set: (key, value) => void lru.set(keyOf(key), value),
    stats: () => ({ entries: lru.size, bytes: lru.calculatedSize }),
  };
}

/** The json body: the cached head plus this request's `rate_limit` and `request_id`. */
export function completeJsonBody(head: string, rateLimit: unknown, requestId: string): string {
  return `${head},"rate_limit":${JSON.stringify(rateLimit)},"request_id":${JSON.stringify(requestId)}}`;
}

/** `JSON.stringify(body)` without its closing brace, to be completed by completeJsonBody. */
export function jsonHead(body: Record<string, unknown>): string {
  const json = JSON.stringify(body);
  return json.slice(0, -1);
}

/**
 * jsonHead of `{...before, [name]: <json>, ...after}` where `json` is a value already rendered as
 * JSON (the extractor's segments), spliced in without being parsed. `before` must not be empty.
 */
export function jsonHeadAround(
  before: Record<string, unknown>,
  name: string,
  json: string,
  after: Record<string, unknown>,
): string {
  const rest = JSON.stringify(after).slice(1, -1);
  return `${JSON.stringify(before).slice(0, -1)},${JSON.stringify(name)}:${json}${rest ? `,${rest}` : ''}`;
}

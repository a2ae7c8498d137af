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
import type { IncludeField } from '@subx/public-api';

/** What selects one answer: every request field that changes the response's bytes. */
export interface ExtractCacheKey {
  videoId: string;
  language: string;
  include: readonly IncludeField[];
  translate: boolean;
  format: OutputFormat;
  includeTimestamps: boolean;
  /** captions, auto or transcribe: a transcription is not the captions' answer. */
  mode?: string;
}

export interface CachedExtract {
  /** The content type to send. */
  contentType: string;
  /**
   * UTF-8. json: the serialised body without its closing brace and per-request fields; other
   * formats: the whole document.
   */
  payload: Buffer;
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
  `${k.videoId}\n${k.language}\n${k.include.join(',')}\n${k.translate ? 1 : 0}\n${k.format}\n${k.includeTimestamps ? 1 : 0}\n${k.mode ?? 'captions'}`;

/** The micro-cache, or undefined when `maxBytes` or `ttlMs` is 0 (disabled). */
export function createExtractCache(options: ExtractCacheOptions): ExtractCache | undefined {
  if (options.maxBytes <= 0 || options.ttlMs <= 0) return undefined;
  const lru = new LRUCache<string, CachedExtract>({
    maxSize: options.maxBytes,
    sizeCalculation: (value, key) =>
      value.payload.length + 2 * (value.contentType.length + key.length) + ENTRY_OVERHEAD_BYTES,
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

/**
 * Response bodies are cut from shared slabs, as node's own Buffer pool does for buffers under
 * 4 KiB: a 4 KiB answer of its own allocation (an ArrayBuffer each, with its own backing store
 * and garbage-collection bookkeeping) cost about 5% of a cached extract's throughput. A slab is
 * never rewound: a slice stays valid for as long as anything holds it (the socket until it is
 * written), and the slab is freed with its last slice. A body over a quarter of a slab gets a
 * buffer of its own, so one large answer never pins a mostly unused slab.
 *
 * 64 KiB, under the C allocator's threshold for mapping memory of its own (128 KiB by default):
 * 256 KiB slabs cost about 3% more CPU per cached extract (switched every second under
 * one load), the price of mapping and faulting in fresh pages for every slab.
 */
const SLAB_BYTES = 64 * 1024;
let slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
let slabOffset = 0;

function bodyBuffer(bytes: number): Buffer {
  if (bytes > SLAB_BYTES / 4) return Buffer.allocUnsafeSlow(bytes);
  if (slabOffset + bytes > SLAB_BYTES) {
    slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
    slabOffset = 0;
  }
  // A view made as node's pool makes its own (subarray looks up the species constructor first).
  const body = Buffer.from(slab.buffer, slabOffset, bytes);
  slabOffset = (slabOffset + bytes + 7) & ~7; // the next slice 8-byte aligned, as node's pool does
  return body;
}

/**
 * Where the bytes of a rendered answer go. One that is sent once and not kept (the micro-cache
 * off, or an answer it does not take) is cut from the slab like a body: an answer of 4 KiB or more
 * would otherwise be an ArrayBuffer of its own per request. A kept answer must not pin a slab.
 */
export type ByteAllocator = (bytes: number) => Buffer;
export const sentOnce: ByteAllocator = bodyBuffer;
export const kept: ByteAllocator = (bytes) => Buffer.allocUnsafe(bytes);

/** `text` as UTF-8 bytes from `alloc`. */
export function utf8Bytes(text: string, alloc: ByteAllocator): Buffer {
  const bytes = alloc(Buffer.byteLength(text));
  bytes.write(text);
  return bytes;
}

/** The end of a json body that is this request's own: `rate_limit`, `request_id`, the closing brace. */
export function jsonTail(rateLimitJson: string, requestId: string, creditsUsed: number): string {
  return `,"credits_used":${creditsUsed},"rate_limit":${rateLimitJson},"request_id":${JSON.stringify(requestId)}}`;
}

/**
 * The json body as one Buffer: the cached head's bytes, then this request's `credits_used`,
 * `rate_limit` and `request_id` written behind them (one copy of the head; see the header comment
 * for why bytes).
 */
export function completeJsonBody(
  head: Buffer,
  rateLimitJson: string,
  requestId: string,
  creditsUsed: number,
): Buffer {
  const tail = jsonTail(rateLimitJson, requestId, creditsUsed);
  const body = bodyBuffer(head.length + Buffer.byteLength(tail));
  head.copy(body);
  body.write(tail, head.length);
  return body;
}

/** `JSON.stringify(body)` without its closing brace, to be completed by completeJsonBody. */
export function jsonHead(body: Record<string, unknown>): string {
  const json = JSON.stringify(body);
  return json.slice(0, -1);
}

/**
 * jsonHead of `{<members>, [name]: <json>, ...after}` where `members` are JSON object members
 * already rendered (without braces: the extractor's head_json_utf8, or @subx/formats
 * answerHeadJson) and `json` a value already rendered as JSON (the extractor's segments), both
 * spliced in without being parsed: as strings, or as UTF-8 bytes copied in as they are (neither
 * decoded nor encoded again). `members` must not be empty.
 *
 * With `tail` (jsonTail), the whole body of an answer that is sent once and not kept: written in
 * one pass, where a head completed by completeJsonBody would be a second copy of every byte.
 */
export function jsonHeadAround(
  members: string | Uint8Array,
  name: string,
  json: string | Uint8Array,
  after: Record<string, unknown>,
  alloc: ByteAllocator,
  tail = '',
): Buffer {
  const rest = JSON.stringify(after).slice(1, -1);
  const open = `,${JSON.stringify(name)}:`;
  const close = rest ? `,${rest}${tail}` : tail;
  if (typeof members === 'string' && typeof json === 'string') {
    return utf8Bytes(`{${members}${open}${json}${close}`, alloc);
  }
  const parts = ['{', members, open, json, close];
  let bytes = 0;
  for (const part of parts) bytes += typeof part === 'string' ? Buffer.byteLength(part) : part.length;
  const head = alloc(bytes);
  let at = 0;
  for (const part of parts) {
    if (typeof part === 'string') at += head.write(part, at);
    else {
      head.set(part, at);
      at += part.length;
    }
  }
  return head;
}

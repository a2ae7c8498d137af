/**
 * The extractor's service definition with its transcript answers encoded once. A hot transcript's
 * answer is one frozen GetTranscriptResponse shared by every hit (extraction-service.ts): its
 * protobuf bytes are kept beside it, and a GetTranscripts message carrying it is those bytes behind
 * a few bytes of framing written here, instead of every segment and metadata field encoded again
 * for every request. Answers that are not frozen (misses, fresh fetches) are encoded as usual.
 */
import { extractorV1 } from '@subx/contracts';

const { GetTranscriptResponse, GetTranscriptsResponse, ExtractorServiceService } = extractorV1;
type Transcript = extractorV1.GetTranscriptResponse;

const encodedAnswers = new WeakMap<Transcript, Uint8Array>();

/** A frozen answer's bytes, encoded on first use. */
export function encodeTranscript(answer: Transcript): Uint8Array {
  let bytes = encodedAnswers.get(answer);
  if (bytes === undefined) {
    bytes = GetTranscriptResponse.encode(answer).finish();
    if (Object.isFrozen(answer)) encodedAnswers.set(answer, bytes);
  }
  return bytes;
}

/** GetTranscriptsResponse field numbers and wire types (extractor_service.proto). */
const INDEX_TAG = (1 << 3) | 0; // uint32 index = 1 (varint)
const TRANSCRIPT_TAG = (2 << 3) | 2; // GetTranscriptResponse transcript = 2 (length-delimited)
const MORE_TAG = (4 << 3) | 2; // repeated GetTranscriptsResponse more = 4 (length-delimited)

/** A piece of an encoded message: bytes kept elsewhere, or a few bytes of framing written here. */
type Part = Uint8Array | number[];

function pushVarint(out: number[], value: number): void {
  while (value > 0x7f) {
    out.push((value & 0x7f) | 0x80);
    value >>>= 7;
  }
  out.push(value);
}

/**
 * Appends the parts of a GetTranscriptsResponse's encoding, in the generated encoder's order (index
 * unless 0, the result, then each of `more`), with a transcript's bytes from encodeTranscript;
 * returns how many bytes they make. The framing is a few bytes written by hand: a BinaryWriter per
 * answer (its buffer grown and copied by `finish`) cost more than the bytes it wrote.
 */
function appendParts(message: extractorV1.GetTranscriptsResponse, parts: Part[]): number {
  if (message.result?.$case !== 'transcript') {
    // A failure (or nothing) with no transcript to reuse; `more` is encoded below, as the rest.
    const own = GetTranscriptsResponse.encode({ ...message, more: [] }).finish();
    parts.push(own);
    return own.length + appendMore(message.more, parts);
  }
  const body = encodeTranscript(message.result.value);
  const head: number[] = [];
  if (message.index !== 0) {
    head.push(INDEX_TAG);
    pushVarint(head, message.index);
  }
  head.push(TRANSCRIPT_TAG);
  pushVarint(head, body.length);
  parts.push(head, body);
  return head.length + body.length + appendMore(message.more, parts);
}

function appendMore(more: readonly extractorV1.GetTranscriptsResponse[], parts: Part[]): number {
  let bytes = 0;
  for (const answer of more) {
    // The header goes before the answer's parts; its length is known once they are appended.
    const header: number[] = [MORE_TAG];
    parts.push(header);
    const length = appendParts(answer, parts);
    pushVarint(header, length);
    bytes += header.length + length;
  }
  return bytes;
}

/**
 * The buffer GetTranscripts messages are serialised into, reused by every message. grpc-js copies
 * what a serializer returns into a buffer of its own, behind the 5-byte gRPC prefix, before the
 * serializer is called again (server-interceptors `serializeMessage`: serialize, allocate, copy,
 * synchronously), so the serializer's buffer is dead as soon as it is returned. A new buffer per
 * message (up to about 1 MiB for grouped answers) was external memory, and allocating some
 * hundreds of MB of it a second under load made V8 start a full garbage collection ("external
 * memory pressure") about twice a second. Messages larger than the scratch get a buffer of their own.
 */
const SCRATCH_MAX_BYTES = 2 * 1024 * 1024;
let scratch = Buffer.allocUnsafeSlow(64 * 1024);

function serializationBuffer(bytes: number): Buffer {
  if (bytes > SCRATCH_MAX_BYTES) return Buffer.allocUnsafe(bytes);
  if (bytes > scratch.length) scratch = Buffer.allocUnsafeSlow(Math.min(SCRATCH_MAX_BYTES, 2 * bytes));
  return scratch.subarray(0, bytes);
}

/**
 * GetTranscriptsResponse, byte for byte as the generated encoder writes it, in one buffer of its
 * own (`into` says where: the serializer passes the reused scratch).
 */
export function encodeTranscriptsResponse(
  message: extractorV1.GetTranscriptsResponse,
  into: (bytes: number) => Buffer = (bytes) => Buffer.allocUnsafe(bytes),
): Buffer {
  const parts: Part[] = [];
  const encoded = into(appendParts(message, parts));
  let at = 0;
  for (const part of parts) {
    if (Array.isArray(part)) {
      for (const byte of part) encoded[at++] = byte;
    } else {
      encoded.set(part, at);
      at += part.length;
    }
  }
  return encoded;
}

/** ExtractorService with the transcript answers serialised through the kept bytes. */
export const extractorServiceDefinition = {
  ...ExtractorServiceService,
  getTranscript: {
    ...ExtractorServiceService.getTranscript,
    responseSerialize: (answer: Transcript): Buffer => {
      const bytes = encodeTranscript(answer);
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
  },
  getTranscripts: {
    ...ExtractorServiceService.getTranscripts,
    // Valid until the next message is serialised: grpc-js has copied it by then (above).
    responseSerialize: (message: extractorV1.GetTranscriptsResponse): Buffer =>
      encodeTranscriptsResponse(message, serializationBuffer),
  },
  streamTranscripts: {
    ...ExtractorServiceService.streamTranscripts,
    // StreamTranscriptsResponse has GetTranscriptsResponse's fields, numbers and wire form.
    responseSerialize: (message: extractorV1.StreamTranscriptsResponse): Buffer =>
      encodeTranscriptsResponse(message, serializationBuffer),
  },
} satisfies typeof ExtractorServiceService;

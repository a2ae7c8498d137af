/**
 * The extractor's service definition with its transcript answers encoded once. A hot transcript's
 * answer is one frozen GetTranscriptResponse shared by every hit (extraction-service.ts): its
 * protobuf bytes are kept beside it, and a GetTranscripts message carrying it is those bytes behind
 * a few bytes of framing written here, instead of every segment and metadata field encoded again
 * for every request. Answers that are not frozen (misses, fresh fetches) are encoded as usual.
 */
import { BinaryWriter } from '@bufbuild/protobuf/wire';
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

/**
 * The parts of a GetTranscriptsResponse's encoding, in the generated encoder's order (index unless
 * 0, the result, then each of `more`), with a transcript's bytes from encodeTranscript. The tags
 * and lengths come from a BinaryWriter; the kept bytes are not written into it (its `bytes` copies
 * into a growing buffer, and `finish` copies again) but joined once, by Buffer.concat.
 */
function responseParts(message: extractorV1.GetTranscriptsResponse): Uint8Array[] {
  if (message.result?.$case !== 'transcript') {
    // A failure (or nothing) with no transcript to reuse; `more` is encoded below, as the rest.
    const own = GetTranscriptsResponse.encode({ ...message, more: [] }).finish();
    return [own, ...moreParts(message.more)];
  }
  const body = encodeTranscript(message.result.value);
  const head = new BinaryWriter();
  if (message.index !== 0) head.uint32(INDEX_TAG).uint32(message.index);
  head.uint32(TRANSCRIPT_TAG).uint32(body.length);
  return [head.finish(), body, ...moreParts(message.more)];
}

function moreParts(more: readonly extractorV1.GetTranscriptsResponse[]): Uint8Array[] {
  const parts: Uint8Array[] = [];
  for (const answer of more) {
    const own = responseParts(answer);
    const length = own.reduce((n, part) => n + part.length, 0);
    parts.push(new BinaryWriter().uint32(MORE_TAG).uint32(length).finish(), ...own);
  }
  return parts;
}

/** GetTranscriptsResponse, byte for byte as the generated encoder writes it. */
export function encodeTranscriptsResponse(message: extractorV1.GetTranscriptsResponse): Buffer {
  return Buffer.concat(responseParts(message));
}

/** ExtractorService with the two transcript answers serialised through the kept bytes. */
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
    responseSerialize: encodeTranscriptsResponse,
  },
} satisfies typeof ExtractorServiceService;

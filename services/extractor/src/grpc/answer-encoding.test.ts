import { describe, expect, it } from 'vitest';
import { commonV1, extractorV1 } from '@subx/contracts';
import {
  encodeTranscript,
  encodeTranscriptsResponse,
  extractorServiceDefinition,
} from './answer-encoding.ts';

const { GetTranscriptResponse, GetTranscriptsResponse } = extractorV1;

const answer = (overrides: Partial<extractorV1.GetTranscriptResponse> = {}) =>
  GetTranscriptResponse.fromPartial({
    videoId: 'dQw4w9WgXcQ',
    language: 'en',
    subtitleType: commonV1.SubtitleType.SUBTITLE_TYPE_MANUAL,
    metadata: { title: 'Größe ✓', channel: 'c', duration: 212, tags: { values: ['a', 'b'] } },
    cached: true,
    fetchedAt: '2026-11-27T00:00:00.000Z',
    segmentsJson: JSON.stringify([{ text: 'héllo — 🎵', start: 0.5, duration: 1.25 }]),
    ...overrides,
  });

describe('the extractor answers encoded once', () => {
  it('frames a transcript answer byte for byte as the generated encoder does, for any index', () => {
    for (const index of [0, 1, 127, 128, 300, 16_384, 2 ** 32 - 1]) {
      for (const value of [
        answer(),
        Object.freeze(answer()),
        answer({
          segments: [{ text: 'x', start: 1, duration: 2, words: [{ text: 'x', start: 1, end: 1.5 }] }],
        }),
        Object.freeze(answer({ segmentsJson: '', segmentsJsonUtf8: Buffer.from('[{"text":"héllo — 🎵"}]') })),
      ]) {
        const message = { index, result: { $case: 'transcript' as const, value }, more: [] };
        const expected = Buffer.from(GetTranscriptsResponse.encode(message).finish());
        expect(encodeTranscriptsResponse(message).equals(expected)).toBe(true);
        expect(GetTranscriptsResponse.decode(encodeTranscriptsResponse(message))).toEqual(message);
      }
    }
  });

  it('encodes failures and empty answers with the generated encoder', () => {
    const failed: extractorV1.GetTranscriptsResponse = {
      index: 3,
      result: { $case: 'error', value: { code: 5, message: 'private', metadata: { reason: 'private' } } },
      more: [],
    };
    expect(
      encodeTranscriptsResponse(failed).equals(Buffer.from(GetTranscriptsResponse.encode(failed).finish())),
    ).toBe(true);
    const empty = { index: 2, result: undefined, more: [] };
    expect(
      encodeTranscriptsResponse(empty).equals(Buffer.from(GetTranscriptsResponse.encode(empty).finish())),
    ).toBe(true);
  });

  it('frames grouped answers (more) byte for byte as the generated encoder does', () => {
    const transcriptAt = (index: number, value = Object.freeze(answer())) => ({
      index,
      result: { $case: 'transcript' as const, value },
      more: [],
    });
    const failedAt = (index: number) => ({
      index,
      result: { $case: 'error' as const, value: { code: 5, message: 'gone', metadata: {} } },
      more: [],
    });
    const big = Object.freeze(
      answer({ segmentsJson: JSON.stringify(Array(400).fill({ text: 'x'.repeat(40) })) }),
    );
    const grouped: extractorV1.GetTranscriptsResponse[] = [
      { ...transcriptAt(5), more: [transcriptAt(0), failedAt(200), transcriptAt(63, big)] },
      { ...failedAt(0), more: [transcriptAt(1), transcriptAt(2, answer({ language: 'de' }))] },
    ];
    for (const message of grouped) {
      const expected = Buffer.from(GetTranscriptsResponse.encode(message).finish());
      expect(encodeTranscriptsResponse(message).equals(expected)).toBe(true);
      expect(GetTranscriptsResponse.decode(encodeTranscriptsResponse(message))).toEqual(message);
    }
  });

  it('serialises StreamTranscripts answers as the generated StreamTranscriptsResponse encoder does (the same wire form)', () => {
    const { StreamTranscriptsResponse } = extractorV1;
    const serialize = extractorServiceDefinition.streamTranscripts.responseSerialize;
    const value = Object.freeze(answer());
    const failed = { code: 5, message: 'gone', metadata: { 'app-error-code': 'VIDEO_NOT_FOUND' } };
    const messages: extractorV1.StreamTranscriptsResponse[] = [
      // numbers along a call run high: a five-byte varint
      { index: 4_000_000_001, result: { $case: 'transcript', value }, more: [] },
      {
        index: 7,
        result: { $case: 'error', value: failed },
        more: [
          { index: 8, result: { $case: 'transcript', value }, more: [] },
          { index: 4_294_967_295, result: { $case: 'error', value: failed }, more: [] },
        ],
      },
    ];
    for (const message of messages) {
      const bytes = Buffer.from(serialize(message));
      expect(bytes.equals(Buffer.from(StreamTranscriptsResponse.encode(message).finish()))).toBe(true);
      expect(StreamTranscriptsResponse.decode(bytes)).toEqual(message);
    }
  });

  it('serialises GetTranscripts messages into one reused buffer, a message larger than it into its own', () => {
    // grpc-js copies each serialised message before the next is serialised (answer-encoding.ts);
    // the end-to-end test of concurrent grouped calls (extractor.grpc.test.ts) holds it to that.
    const serialize = extractorServiceDefinition.getTranscripts.responseSerialize;
    const at = (index: number, value: extractorV1.GetTranscriptResponse) => ({
      index,
      result: { $case: 'transcript' as const, value },
      more: [],
    });
    const first = at(1, Object.freeze(answer()));
    const second = at(2, Object.freeze(answer({ language: 'de' })));
    const a = serialize(first);
    const aBytes = Buffer.from(a);
    const b = serialize(second);
    expect(b.buffer).toBe(a.buffer);
    expect(aBytes.equals(encodeTranscriptsResponse(first))).toBe(true);
    expect(b.equals(encodeTranscriptsResponse(second))).toBe(true);
    const huge = at(3, answer({ segmentsJson: '', segmentsJsonUtf8: Buffer.alloc(3 * 1024 * 1024, 0x20) }));
    const own = serialize(huge);
    expect(own.buffer).not.toBe(b.buffer);
    expect(own.equals(encodeTranscriptsResponse(huge))).toBe(true);
  });

  it('keeps the bytes of a frozen (shared) answer only: an answer that may still change is encoded each time', () => {
    const shared = Object.freeze(answer());
    expect(encodeTranscript(shared)).toBe(encodeTranscript(shared));
    const own = answer();
    const before = encodeTranscript(own);
    own.language = 'de';
    expect(encodeTranscript(own)).not.toBe(before);
    expect(GetTranscriptResponse.decode(encodeTranscript(own)).language).toBe('de');
  });

  it('serialises unary GetTranscript answers as the generated definition does, and changes nothing else', () => {
    const value = Object.freeze(answer());
    const generated = extractorV1.ExtractorServiceService;
    expect(
      extractorServiceDefinition.getTranscript
        .responseSerialize(value)
        .equals(generated.getTranscript.responseSerialize(value)),
    ).toBe(true);
    for (const name of Object.keys(generated) as (keyof typeof generated)[]) {
      if (name === 'getTranscript' || name === 'getTranscripts' || name === 'streamTranscripts') continue;
      expect(extractorServiceDefinition[name]).toBe(generated[name]);
    }
  });
});

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { commonV1, extractorV1 } from '@subx/contracts';
import { answerHeadJson } from '@subx/formats';
import { AppError } from '@subx/errors';
import { fromItemFailure, type GrpcClient } from '@subx/service-kit';
import { startFakeYouTube, videoIds, playlistIds, type FakeYouTube } from '@subx/testing/fake-youtube';
import { startTestExtractor, type TestExtractor } from './fixtures/extractor-service.ts';

describe('extractor over gRPC against the fake YouTube', () => {
  let youtube: FakeYouTube;
  let extractor: TestExtractor;
  let client: GrpcClient<extractorV1.ExtractorServiceClient>;

  beforeAll(async () => {
    youtube = await startFakeYouTube();
    extractor = await startTestExtractor({
      youtubeEnv: { YOUTUBE_BASE_URL: youtube.url, YOUTUBE_RETRIES: '0' },
    });
    client = extractor.client;
  });

  afterAll(async () => {
    await extractor?.stop();
    await youtube?.close();
  });

  beforeEach(() => youtube.reset());

  const transcript = (videoId: string, extra: Partial<extractorV1.GetTranscriptRequest> = {}) =>
    client.getTranscript({
      videoId,
      language: 'en',
      include: [],
      forceRefresh: false,
      translate: false,
      segmentsAsJson: false,
      segmentsJsonAsBytes: false,
      headJsonAsBytes: false,
      answerJson: false,
      mode: 0,
      maxAudioSeconds: 0,
      accountId: '',
      ...extra,
    });

  it('returns manual English subtitles with metadata, then serves the same answer from the cache', async () => {
    const first = await transcript(videoIds.manualAndAuto);
    expect(first.videoId).toBe(videoIds.manualAndAuto);
    expect(first.language).toBe('en');
    expect(first.subtitleType).toBe(commonV1.SubtitleType.SUBTITLE_TYPE_MANUAL);
    expect(first.segments.length).toBeGreaterThan(3);
    for (const s of first.segments) {
      expect(s.text.trim()).not.toBe('');
      expect(s.start).toBeGreaterThanOrEqual(0);
      expect(s.duration).toBeGreaterThanOrEqual(0);
    }
    expect(first.metadata?.title).toBeTruthy();
    expect(first.metadata?.uploadDate).toMatch(/^\d{8}$/);
    expect(first.cached).toBe(false);
    const upstreamCalls = youtube.count();
    // VISIONOS /player, then the timedtext GET with the masked WEB /player for the upload date
    expect(upstreamCalls).toBe(3);

    const second = await transcript(videoIds.manualAndAuto);
    expect(second.cached).toBe(true);
    expect(second.segments).toEqual(first.segments);
    expect(youtube.count()).toBe(upstreamCalls);
  });

  it('segments_as_json answers the segments as the public JSON array, on a miss and on every hit', async () => {
    const plain = await transcript(videoIds.chapters, { language: 'de', include: ['chapters'] });
    const expected = JSON.stringify(
      plain.segments.map(({ text, start, duration }) => ({ text, start, duration })),
    );
    const hits = [
      await transcript(videoIds.chapters, { language: 'de', include: ['chapters'], segmentsAsJson: true }),
      await transcript(videoIds.chapters, { language: 'de', include: ['chapters'], segmentsAsJson: true }),
    ];
    for (const hit of hits) {
      expect(hit.segments).toEqual([]);
      expect(hit.segmentsJson).toBe(expected);
      expect(hit.cached).toBe(true);
      // everything else is the answer without segments_as_json
      expect({ ...hit, segments: plain.segments, segmentsJson: '', cached: false }).toEqual(plain);
    }
    // and the plain answer from the same cached entry still has its segments
    expect((await transcript(videoIds.chapters, { language: 'de', include: ['chapters'] })).segments).toEqual(
      plain.segments,
    );

    const fresh = await transcript(videoIds.chapters, {
      language: 'de',
      include: ['chapters'],
      forceRefresh: true,
      segmentsAsJson: true,
    });
    expect(fresh.cached).toBe(false);
    expect(fresh.segments).toEqual([]);
    expect(JSON.parse(fresh.segmentsJson)).toEqual(JSON.parse(expected));
  });

  it('segments_json_as_bytes answers the same array as UTF-8 bytes, on a miss and on every hit', async () => {
    const options = { language: 'de', include: ['chapters'] };
    const asString = await transcript(videoIds.chapters, { ...options, segmentsAsJson: true });
    expect(asString.segmentsJsonUtf8).toHaveLength(0);
    const asBytes = [
      await transcript(videoIds.chapters, { ...options, segmentsAsJson: true, segmentsJsonAsBytes: true }),
      await transcript(videoIds.chapters, { ...options, segmentsAsJson: true, segmentsJsonAsBytes: true }),
    ];
    for (const answer of asBytes) {
      expect(answer.cached).toBe(true);
      expect(answer.segments).toEqual([]);
      expect(answer.segmentsJson).toBe('');
      expect(Buffer.from(answer.segmentsJsonUtf8).toString('utf8')).toBe(asString.segmentsJson);
      expect({ ...answer, segmentsJson: asString.segmentsJson, segmentsJsonUtf8: new Uint8Array(0) }).toEqual(
        asString,
      );
    }
    // Without segments_as_json the flag asks for nothing: the segments themselves.
    const plain = await transcript(videoIds.chapters, { ...options, segmentsJsonAsBytes: true });
    expect(plain.segments.length).toBeGreaterThan(0);
    expect(plain.segmentsJson).toBe('');
    expect(plain.segmentsJsonUtf8).toHaveLength(0);
    const fresh = await transcript(videoIds.chapters, {
      ...options,
      forceRefresh: true,
      segmentsAsJson: true,
      segmentsJsonAsBytes: true,
    });
    expect(fresh.cached).toBe(false);
    expect(Buffer.from(fresh.segmentsJsonUtf8).toString('utf8')).toBe(asString.segmentsJson);
  });

  it('head_json_as_bytes answers the members before the segments as UTF-8, instead of the metadata', async () => {
    // Two opt-in fields, asked in either order: one cached entry, one head.
    const asked = { language: 'de', segmentsAsJson: true, segmentsJsonAsBytes: true };
    const withMetadata = await transcript(videoIds.chapters, { ...asked, include: ['tags', 'chapters'] });
    expect(withMetadata.headJsonUtf8).toHaveLength(0);
    expect(withMetadata.metadata?.chapters?.values.length).toBeGreaterThan(0);
    const expected = answerHeadJson({
      videoId: videoIds.chapters,
      metadata: withMetadata.metadata,
      include: ['chapters', 'tags'],
      language: withMetadata.language,
      subtitleType:
        withMetadata.subtitleType === commonV1.SubtitleType.SUBTITLE_TYPE_MANUAL
          ? 'manual'
          : 'auto_generated',
    });
    const heads = [
      await transcript(videoIds.chapters, { ...asked, include: ['chapters', 'tags'], headJsonAsBytes: true }),
      await transcript(videoIds.chapters, { ...asked, include: ['tags', 'chapters'], headJsonAsBytes: true }),
    ];
    for (const answer of heads) {
      expect(answer.cached).toBe(true);
      expect(answer.metadata).toBeUndefined();
      const head = Buffer.from(answer.headJsonUtf8).toString('utf8');
      expect(head).toBe(expected);
      // the members of the public answer: the chapters as the API names them, in key order
      expect(JSON.parse(`{${head}}`)).toMatchObject({
        video_id: videoIds.chapters,
        metadata: { chapters: expect.arrayContaining([expect.objectContaining({ start_time: 0 })]) },
        language: withMetadata.language,
      });
      expect(Object.keys(JSON.parse(`{${head}}`).metadata).slice(-2)).toEqual(['chapters', 'tags']);
      // everything else is the answer without the flag
      expect({ ...answer, metadata: withMetadata.metadata, headJsonUtf8: new Uint8Array(0) }).toEqual({
        ...withMetadata,
        cached: true,
      });
    }
    // Without segments_json_as_bytes the flag asks for nothing: the metadata as before.
    const asString = await transcript(videoIds.chapters, {
      language: 'de',
      include: ['chapters', 'tags'],
      segmentsAsJson: true,
      headJsonAsBytes: true,
    });
    expect(asString.metadata).toEqual(withMetadata.metadata);
    expect(asString.headJsonUtf8).toHaveLength(0);
    // A fresh answer (not shared) carries the head too.
    const fresh = await transcript(videoIds.chapters, {
      ...asked,
      include: ['chapters', 'tags'],
      headJsonAsBytes: true,
      forceRefresh: true,
    });
    expect(fresh.cached).toBe(false);
    expect(fresh.metadata).toBeUndefined();
    expect(JSON.parse(`{${Buffer.from(fresh.headJsonUtf8).toString('utf8')}}`)).toEqual(
      JSON.parse(`{${expected}}`),
    );
  });

  it('answer_json answers exactly what the three deprecated flags together answer', async () => {
    const options = { language: 'de', include: ['tags', 'chapters'] };
    const deprecated = { segmentsAsJson: true, segmentsJsonAsBytes: true, headJsonAsBytes: true };
    // force_refresh: a fresh answer (not a hit of an earlier test's entry), and the entry rewritten
    const miss = await transcript(videoIds.chapters, { ...options, answerJson: true, forceRefresh: true });
    expect(miss.cached).toBe(false);
    expect(miss.segments).toEqual([]);
    expect(miss.segmentsJson).toBe('');
    expect(miss.metadata).toBeUndefined();
    expect(miss.headJsonUtf8.length).toBeGreaterThan(0);
    expect(JSON.parse(Buffer.from(miss.segmentsJsonUtf8).toString('utf8')).length).toBeGreaterThan(0);
    const [viaFlag, viaDeprecated] = [
      await transcript(videoIds.chapters, { ...options, answerJson: true }),
      await transcript(videoIds.chapters, { ...options, ...deprecated }),
    ];
    expect(viaFlag.cached).toBe(true);
    expect(viaFlag).toEqual(viaDeprecated);
    expect({ ...miss, cached: true }).toEqual(viaFlag);
  });

  it('force_refresh goes upstream again and reports cached: false', async () => {
    await transcript(videoIds.autoOnly);
    const before = youtube.count();
    const refreshed = await transcript(videoIds.autoOnly, { forceRefresh: true });
    expect(refreshed.cached).toBe(false);
    expect(youtube.count()).toBeGreaterThan(before);
    const after = await transcript(videoIds.autoOnly);
    expect(after.cached).toBe(true);
  });

  it('coalesces concurrent identical cold requests into one upstream fetch', async () => {
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => transcript(videoIds.audioTracks, { include: ['description'] })),
    );
    expect(new Set(answers.map((a) => a.segments.length)).size).toBe(1);
    expect(youtube.count('timedtext')).toBe(1);
    expect(answers.filter((a) => !a.cached).length).toBeGreaterThanOrEqual(1);
  });

  it('fills opt-in metadata only when asked', async () => {
    const plain = await transcript(videoIds.manualAndAuto, { forceRefresh: true });
    expect(plain.metadata?.likeCount).toBeUndefined();
    expect(plain.metadata?.description).toBeUndefined();
    const rich = await transcript(videoIds.manualAndAuto, { include: ['like_count', 'description', 'tags'] });
    expect(typeof rich.metadata?.likeCount).toBe('bigint');
    expect(typeof rich.metadata?.description).toBe('string');
    expect(Array.isArray(rich.metadata?.tags?.values)).toBe(true);
  });

  it('carries typed errors across gRPC: private video → VIDEO_UNAVAILABLE (private)', async () => {
    const err = await transcript(videoIds.private).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('VIDEO_UNAVAILABLE');
    expect((err as AppError).reason).toBe('private');
  });

  it('rejects an unknown include name with INVALID_INCLUDE', async () => {
    const err = await transcript(videoIds.manualAndAuto, { include: ['likes'] }).catch((e: unknown) => e);
    expect((err as AppError).code).toBe('INVALID_INCLUDE');
  });

  it('validates availability from one upstream request and caches it', async () => {
    const v = await client.validateVideo({ videoId: videoIds.manualAndAuto });
    expect(v).toMatchObject({ valid: true, hasSubtitles: true, cached: false });
    expect(v.manualLanguages).toContain('en');
    expect(v.autoGeneratedLanguages).toContain('en');
    expect(youtube.count()).toBe(1);
    expect((await client.validateVideo({ videoId: videoIds.manualAndAuto })).cached).toBe(true);
    expect(youtube.count()).toBe(1);
  });

  it('validate answers valid: false for a private video instead of failing, and says why', async () => {
    const v = await client.validateVideo({ videoId: videoIds.private });
    expect(v.valid).toBe(false);
    expect(v.hasSubtitles).toBe(false);
    expect(v.invalidReason).toBe('private');
    expect((await client.validateVideo({ videoId: videoIds.invalid })).invalidReason).toBe('video_not_found');
    expect((await client.validateVideo({ videoId: videoIds.manualAndAuto })).invalidReason).toBe('');
  });

  it('validate says the captions of a stream in processing are pending; extract is VIDEO_PROCESSING', async () => {
    const v = await client.validateVideo({ videoId: videoIds.postLive });
    expect(v).toMatchObject({
      valid: true,
      hasSubtitles: false,
      invalidReason: '',
      captionsPending: 'post_live',
    });
    expect((await client.validateVideo({ videoId: videoIds.postLive })).captionsPending).toBe('post_live');
    expect((await client.validateVideo({ videoId: videoIds.manualAndAuto })).captionsPending).toBe('');
    const err = await transcript(videoIds.postLive).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect([(err as AppError).code, (err as AppError).reason, (err as AppError).retryAfterSeconds]).toEqual([
      'VIDEO_PROCESSING',
      'post_live',
      300,
    ]);
  });

  it('lists the first N playlist videos in order', async () => {
    const p = await client.getPlaylist({ playlistId: playlistIds.synthetic, maxVideos: 25 });
    expect(p.videoIds).toHaveLength(25);
    expect(new Set(p.videoIds).size).toBe(25);
    expect(p.totalVideos).toBeGreaterThanOrEqual(25);
    expect(p.title).toBeTruthy();
  });

  // gRPC status codes (google.rpc.Code)
  const OK = 0;
  const INVALID_ARGUMENT = 3;

  /**
   * One GetTranscripts call, or the same items as one message on a StreamTranscripts call numbered
   * from STREAM_FIRST (then half-closed): the answers in arrival order, indexed from 0 either way
   * (those grouped in one message, with groupAnswers, one after the other), how many messages
   * carried them, and how the call ended.
   */
  type Transport = 'GetTranscripts' | 'StreamTranscripts';
  const TRANSPORTS: Transport[] = ['GetTranscripts', 'StreamTranscripts'];
  const STREAM_FIRST = 4_000_000_000; // near the top of uint32: numbers may not wrap
  const batchOn = (transport: Transport, items: extractorV1.GetTranscriptsItem[], groupAnswers = false) =>
    new Promise<{
      answers: extractorV1.GetTranscriptsResponse[];
      messages: number;
      status: { code: number };
    }>((resolve) => {
      const answers: extractorV1.GetTranscriptsResponse[] = [];
      let messages = 0;
      const first = transport === 'StreamTranscripts' ? STREAM_FIRST : 0;
      const take = (a: extractorV1.GetTranscriptsResponse) => {
        messages++;
        for (const more of a.more) expect(more.more).toEqual([]);
        for (const answer of [a, ...a.more])
          answers.push({ ...answer, index: answer.index - first, more: [] });
      };
      // both kinds of call read alike: answers, then the status
      let call:
        ReturnType<typeof client.raw.getTranscripts> | ReturnType<typeof client.raw.streamTranscripts>;
      if (transport === 'GetTranscripts') {
        call = client.raw.getTranscripts({ items, groupAnswers }, { deadline: Date.now() + 10_000 });
      } else {
        const lane = client.raw.streamTranscripts({ deadline: Date.now() + 10_000 });
        lane.write({
          items: items.map((i) => ({ ...i, timeoutMs: 10_000 })),
          groupAnswers,
          firstIndex: first,
          cancel: [],
        });
        lane.end();
        call = lane;
      }
      call.on('data', take);
      call.on('error', () => undefined);
      call.on('status', (status: { code: number }) => resolve({ answers, messages, status }));
    });
  const batch = (items: extractorV1.GetTranscriptsItem[], groupAnswers = false) =>
    batchOn('GetTranscripts', items, groupAnswers);
  const item = (videoId: string, requestId = '', include: string[] = []) => ({
    request: extractorV1.GetTranscriptRequest.fromPartial({ videoId, language: 'en', include }),
    requestId,
  });

  it.each(TRANSPORTS)(
    '%s answers each item as GetTranscript would, sharing one upstream fetch per video',
    async (transport) => {
      const fresh = transport === 'GetTranscripts' ? 'tags' : 'categories';
      const unaryError = await transcript(videoIds.private).catch((e: unknown) => e);
      youtube.reset();
      const { answers, status } = await batchOn(transport, [
        // include: a cache key no earlier test filled
        item(videoIds.manualAndAuto, 'r-0', [fresh]),
        item(videoIds.private),
        item(videoIds.manualAndAuto, '', [fresh]),
        item('not-an-id'),
      ]);
      expect(status.code).toBe(OK);
      expect(answers.map((a) => a.index).sort()).toEqual([0, 1, 2, 3]);
      const byIndex = new Map(answers.map((a) => [a.index, a.result]));
      const first = byIndex.get(0);
      const again = byIndex.get(2);
      expect(first?.$case).toBe('transcript');
      expect(again?.$case).toBe('transcript');
      if (first?.$case === 'transcript' && again?.$case === 'transcript')
        expect(again.value.segments).toEqual(first.value.segments);
      // the two items of the same video shared the cache's single flight
      expect(youtube.count('timedtext')).toBe(1);
      const failed = byIndex.get(1);
      expect(failed?.$case).toBe('error');
      if (failed?.$case === 'error') {
        const err = fromItemFailure(failed.value, 'extractor');
        const unary = unaryError as AppError;
        for (const field of ['code', 'message', 'status', 'reason', 'details', 'retryAfterSeconds'] as const)
          expect(err[field]).toEqual(unary[field]);
        expect(err.reason).toBe('private');
      }
      const invalid = byIndex.get(3);
      expect(invalid?.$case === 'error' && fromItemFailure(invalid.value, 'extractor').code).toBe(
        'INVALID_URL',
      );
    },
  );

  it.each(TRANSPORTS)(
    '%s answers segments_as_json items from the kept bytes exactly as GetTranscript does',
    async (transport) => {
      const request = { videoId: videoIds.audioTracks, language: 'en', segmentsAsJson: true };
      await transcript(videoIds.audioTracks, { segmentsAsJson: true });
      const unary = await transcript(videoIds.audioTracks, { segmentsAsJson: true });
      expect(unary.cached).toBe(true);
      // index 0 is not written on the wire, 200 takes two varint bytes: both framings
      const items = Array.from({ length: 64 }, (_, i) => ({
        request: extractorV1.GetTranscriptRequest.fromPartial(
          i === 63 ? { ...request, segmentsAsJson: false } : request,
        ),
        requestId: `r-${i}`,
      }));
      const { answers, status } = await batchOn(transport, items);
      expect(status.code).toBe(OK);
      expect(answers).toHaveLength(64);
      for (const answer of answers) {
        expect(answer.result?.$case).toBe('transcript');
        if (answer.result?.$case !== 'transcript') continue;
        if (answer.index === 63) {
          expect(answer.result.value.segmentsJson).toBe('');
          expect(answer.result.value.segments.length).toBeGreaterThan(0);
        } else expect(answer.result.value).toEqual(unary);
      }
    },
  );

  it.each(TRANSPORTS)(
    '%s with group_answers sends the answers done together in one message, and each once',
    async (transport) => {
      await transcript(videoIds.manualAndAuto);
      const items = [
        ...Array.from({ length: 20 }, (_, i) => item(videoIds.manualAndAuto, `g-${i}`)),
        item('not-an-id', 'g-bad'),
      ];
      const alone = await batchOn(transport, items);
      const grouped = await batchOn(transport, items, true);
      expect(grouped.status.code).toBe(OK);
      expect(alone.messages).toBe(21);
      // cache hits and a refused id finish at once: far fewer messages than answers
      expect(grouped.messages).toBeLessThan(5);
      const byIndex = (answers: extractorV1.GetTranscriptsResponse[]) =>
        [...answers].sort((a, b) => a.index - b.index);
      expect(grouped.answers.map((a) => a.index).sort((a, b) => a - b)).toEqual([...Array(21).keys()]);
      expect(byIndex(grouped.answers)).toEqual(byIndex(alone.answers));
    },
  );

  it('GetTranscripts answers concurrent grouped calls each with its own bytes (messages serialised back to back)', async () => {
    // Different answers (one per include set), served from the extractor's cache, so that the
    // grouped messages of both calls are serialised in the same turn, one after the other.
    const includes = [['tags'], ['like_count'], ['chapters'], []];
    const expected = await Promise.all(
      includes.map((include) => transcript(videoIds.manualAndAuto, { include, segmentsAsJson: true })),
    );
    const itemsOf = (call: number) =>
      Array.from({ length: 16 }, (_, i) => ({
        request: extractorV1.GetTranscriptRequest.fromPartial({
          videoId: videoIds.manualAndAuto,
          language: 'en',
          include: includes[(i + call) % includes.length],
          segmentsAsJson: true,
        }),
        requestId: `c${call}-${i}`,
      }));
    const calls = await Promise.all([0, 1, 2].map((call) => batch(itemsOf(call), true)));
    calls.forEach(({ answers, status }, call) => {
      expect(status.code).toBe(OK);
      expect(answers).toHaveLength(16);
      for (const answer of answers) {
        const want = expected[(answer.index + call) % includes.length];
        expect(answer.result).toEqual({ $case: 'transcript', value: { ...want, cached: true } });
      }
    });
  });

  it('GetTranscripts refuses an empty batch and one over 64 items with INVALID_ARGUMENT', async () => {
    expect((await batch([])).status.code).toBe(INVALID_ARGUMENT);
    const big = await batch(Array.from({ length: 65 }, () => item(videoIds.manualAndAuto)));
    expect(big.status.code).toBe(INVALID_ARGUMENT);
    expect(big.answers).toEqual([]);
    expect(
      (await batch(Array.from({ length: 64 }, () => item(videoIds.manualAndAuto)))).answers,
    ).toHaveLength(64);
  });

  it('StreamTranscripts answers several messages on one call, and refuses one over 64 items with INVALID_ARGUMENT', async () => {
    await transcript(videoIds.manualAndAuto);
    const answers: number[] = [];
    const call = client.raw.streamTranscripts({ deadline: Date.now() + 10_000 });
    const status = new Promise<{ code: number }>((resolve) => {
      call.on('data', (a: extractorV1.StreamTranscriptsResponse) => {
        for (const answer of [a, ...a.more]) answers.push(answer.index);
      });
      call.on('error', () => undefined);
      call.on('status', resolve);
    });
    const message = (firstIndex: number, count: number) => ({
      items: Array.from({ length: count }, () => ({ ...item(videoIds.manualAndAuto), timeoutMs: 5_000 })),
      groupAnswers: true,
      firstIndex,
      cancel: [],
    });
    call.write(message(0, 3));
    call.write(message(3, 2));
    await expect.poll(() => answers.length).toBe(5);
    expect(answers.sort()).toEqual([0, 1, 2, 3, 4]);
    call.write(message(5, 65));
    expect((await status).code).toBe(INVALID_ARGUMENT);
    expect(answers).toHaveLength(5);
  });
});

import { createRequire } from 'node:module';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseSrtStrict, publicSegmentsJson } from '@subx/formats';
import { INCLUDE_FIELDS } from '@subx/public-api';
import { KEYS, NEXT_MIDNIGHT, VIDEO, VIDEO_URL, appError, buildTestGateway, transcript } from './support.ts';
import type { TestGateway } from './support.ts';

const require = createRequire(import.meta.url);
const { WebVTTParser } = require('webvtt-parser') as {
  WebVTTParser: new (e?: object) => {
    parse(s: string, m: string): { cues: { text: string }[]; errors: unknown[] };
  };
};

let gw: TestGateway;
beforeEach(async () => {
  gw = await buildTestGateway();
});
afterEach(async () => {
  await gw.app.close();
});

const extract = (body: unknown, headers: Record<string, string> = { 'x-api-key': KEYS.free }) =>
  gw.app.inject({ method: 'POST', url: '/api/v1/extract', payload: body as object, headers });

describe('POST /api/v1/extract', () => {
  it('returns the timed extraction result with metadata, rate_limit and request_id', async () => {
    const res = await extract({ url: VIDEO_URL });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = res.json();
    expect(body).toEqual({
      video_id: VIDEO,
      metadata: {
        title: `Video ${VIDEO}`,
        channel: 'Channel',
        channel_id: 'UC123',
        duration: 125,
        upload_date: '20240102',
        thumbnail_url: `https://i.ytimg.com/vi/${VIDEO}/hqdefault.jpg`,
      },
      language: 'en',
      subtitle_type: 'manual',
      source: 'captions',
      subtitles: [
        { text: 'Hello world', start: 0, duration: 1.5 },
        { text: 'Second line', start: 1.5, duration: 2 },
      ],
      cached: false,
      extracted_at: '2026-03-10T11:00:00.000Z',
      credits_used: 0,
      rate_limit: {
        limit: 100,
        remaining: 99,
        reset: NEXT_MIDNIGHT / 1000,
        reset_at: '2026-03-11T00:00:00.000Z',
      },
      request_id: res.headers['x-request-id'],
    });
    expect(res.headers['x-ratelimit-limit']).toBe('100');
    expect(res.headers['x-ratelimit-remaining']).toBe('99');
    expect(res.headers['x-ratelimit-reset']).toBe('2026-03-11T00:00:00.000Z');
    expect(gw.backends.calls[0]).toMatchObject({
      method: 'getTranscript',
      request: { videoId: VIDEO, language: 'en', include: [], forceRefresh: false, translate: false },
      options: { requestId: body.request_id },
    });
  });

  it('splices the segments the extractor rendered, and renders them itself for an extractor that does not', async () => {
    const bodyOf = async () => {
      // force_refresh: past the gateway's micro-cache, to the extractor each time
      const res = await extract({ url: VIDEO_URL, include: ['tags'], force_refresh: true });
      expect(res.statusCode).toBe(200);
      const { rate_limit: _r, request_id: _id, ...rest } = res.json();
      return { rest, raw: res.body };
    };
    const spliced = await bodyOf();
    // answer_json only, never the deprecated flags it replaces
    expect(gw.backends.calls.at(-1)?.request).toMatchObject({
      answerJson: true,
      segmentsAsJson: false,
      segmentsJsonAsBytes: false,
      headJsonAsBytes: false,
    });
    const withoutRequest = (raw: string) => raw.replace(/"remaining":\d+|"request_id":"[^"]+"/g, '');
    // an extractor that answers the segments' bytes and the metadata: rendered here the same way
    gw.backends.handlers.getTranscript = async (req) => ({
      ...transcript(req.videoId),
      segments: [],
      segmentsJsonUtf8: Buffer.from(publicSegmentsJson(transcript(req.videoId).segments)),
    });
    const withMetadata = await bodyOf();
    expect(withMetadata.rest.metadata.tags).toEqual([]);
    expect(withoutRequest(withMetadata.raw)).toBe(withoutRequest(spliced.raw));
    // the head the extractor rendered goes out as it came
    const head = `"video_id":"${VIDEO}","metadata":{"title":"caf\u00e9 ☕","tags":["t"]},"language":"en","subtitle_type":"manual"`;
    gw.backends.handlers.getTranscript = async (req) => ({
      ...transcript(req.videoId),
      metadata: undefined,
      segments: [],
      segmentsJsonUtf8: Buffer.from(publicSegmentsJson(transcript(req.videoId).segments)),
      headJsonUtf8: Buffer.from(head),
    });
    const withHead = await bodyOf();
    expect(withHead.raw.startsWith(`{${head},"subtitles":[`)).toBe(true);
    expect(withHead.rest.metadata).toEqual({ title: 'café ☕', tags: ['t'] });
    // an extractor that predates answer_json (it ignores the field): segments and metadata
    gw.backends.handlers.getTranscript = async (req) => ({
      ...transcript(req.videoId),
      headJsonUtf8: Buffer.alloc(0),
    });
    const rendered = await bodyOf();
    expect(rendered.rest).toEqual(spliced.rest);
    expect(withoutRequest(rendered.raw)).toBe(withoutRequest(spliced.raw));
    // What the extractor rendered is what goes out, byte for byte.
    const theirs = '[{"text":"caf\u00e9 ☕","start":0,"duration":1}]';
    gw.backends.handlers.getTranscript = async (req) => ({
      ...transcript(req.videoId),
      segments: [],
      segmentsJsonUtf8: Buffer.from(theirs),
    });
    const { rest, raw } = await bodyOf();
    expect(rest.subtitles).toEqual([{ text: 'café ☕', start: 0, duration: 1 }]);
    expect(raw).toContain(`"subtitles":${theirs},`);
    expect(spliced.rest.subtitles).toEqual([
      { text: 'Hello world', start: 0, duration: 1.5 },
      { text: 'Second line', start: 1.5, duration: 2 },
    ]);
    // plain text and documents need the segments themselves
    await extract({ url: VIDEO_URL, include_timestamps: false, force_refresh: true });
    expect(gw.backends.calls.at(-1)?.request).toMatchObject({ answerJson: false });
    await extract({ url: VIDEO_URL, format: 'srt', force_refresh: true });
    expect(gw.backends.calls.at(-1)?.request).toMatchObject({ answerJson: false });
  });

  it('accepts the short-link and shorts forms and passes language, include and force_refresh through', async () => {
    await extract({
      url: `https://youtu.be/${VIDEO}`,
      language: 'pt-BR',
      force_refresh: true,
      include: ['tags'],
    });
    await extract({ url: `https://www.youtube.com/shorts/${VIDEO}` });
    expect(gw.backends.calls.map((c) => c.request)).toEqual([
      {
        videoId: VIDEO,
        language: 'pt-BR',
        include: ['tags'],
        forceRefresh: true,
        translate: false,
        mode: 0,
        maxAudioSeconds: 0,
        accountId: '',
        answerJson: true,
        segmentsAsJson: false,
        segmentsJsonAsBytes: false,
        headJsonAsBytes: false,
      },
      {
        videoId: VIDEO,
        language: 'en',
        include: [],
        forceRefresh: false,
        translate: false,
        mode: 0,
        maxAudioSeconds: 0,
        accountId: '',
        answerJson: true,
        segmentsAsJson: false,
        segmentsJsonAsBytes: false,
        headJsonAsBytes: false,
      },
    ]);
  });

  it('reports cached exactly as the extractor says', async () => {
    gw.backends.handlers.getTranscript = async (req) => transcript(req.videoId, { cached: true });
    expect((await extract({ url: VIDEO_URL })).json().cached).toBe(true);
    gw.backends.handlers.getTranscript = async (req) => transcript(req.videoId, { cached: false });
    expect((await extract({ url: VIDEO_URL, force_refresh: true })).json().cached).toBe(false);
  });

  it('plain-text mode replaces subtitles with text and segment_count', async () => {
    const body = (await extract({ url: VIDEO_URL, include_timestamps: false })).json();
    expect(body.subtitles).toBeUndefined();
    expect(body.text).toBe('Hello world Second line');
    expect(body.segment_count).toBe(2);
  });

  it('adds exactly the opt-in metadata fields named in include', async () => {
    gw.backends.handlers.getTranscript = async (req) =>
      transcript(req.videoId, {
        metadata: {
          ...transcript(req.videoId).metadata,
          tags: { values: ['a', 'b'] },
          viewCount: 12345678901n,
          chapters: { values: [{ title: 'Intro', startTime: 0 }] },
          isLive: false,
        },
      });
    const body = (
      await extract({ url: VIDEO_URL, include: ['tags', 'view_count', 'chapters', 'is_live', 'description'] })
    ).json();
    expect(body.metadata).toMatchObject({
      tags: ['a', 'b'],
      view_count: 12345678901,
      chapters: [{ title: 'Intro', start_time: 0 }],
      is_live: false,
      description: '',
    });
    expect(Object.keys(body.metadata)).toHaveLength(11);
  });

  it('unknown include names are 400 INVALID_INCLUDE listing the nine valid names', async () => {
    const res = await extract({ url: VIDEO_URL, include: ['tags', 'bogus', 'nope'] });
    expect(res.statusCode).toBe(400);
    const error = res.json().error;
    expect(error.code).toBe('INVALID_INCLUDE');
    expect(error.docs_url).toBe('/docs/errors#invalid-include');
    expect(error.message).toContain('bogus, nope');
    for (const name of INCLUDE_FIELDS) expect(error.message).toContain(name);
    expect(error.valid_fields).toEqual([...INCLUDE_FIELDS]);
    expect(gw.backends.calls).toHaveLength(0);
  });

  it.each([
    [{}, 'body.url is required'],
    [{ url: VIDEO_URL, extra: 1 }, "unknown field 'extra'"],
    [{ url: VIDEO_URL, include_timestamps: 'true' }, 'body.include_timestamps must be boolean'],
    [{ url: VIDEO_URL, format: 'pdf' }, 'body.format must be one of: json, srt, vtt, txt, md'],
    [{ url: VIDEO_URL, language: 'english!' }, 'body.language'],
    [{ url: 42 }, 'body.url must be string'],
    [{ url: VIDEO_URL, include: 'tags' }, 'body.include must be array'],
    [[VIDEO_URL], 'body must be object'],
  ])('invalid body %j is 400 INVALID_REQUEST (%s)', async (payload, message) => {
    const res = await extract(payload);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'INVALID_REQUEST', retryable: false });
    expect(res.json().error.message).toContain(message);
  });

  it.each([
    'https://vimeo.com/123',
    'not a url',
    `https://www.youtube.com/watch?v=short`,
    'javascript:alert(1)',
  ])('%s is 400 INVALID_URL', async (url) => {
    const res = await extract({ url });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('INVALID_URL');
  });

  it('maps extractor errors to their status, code and reason', async () => {
    const cases = [
      [appError('VIDEO_NOT_FOUND', 'Video x was not found or is unavailable.'), 404, 'VIDEO_NOT_FOUND'],
      [appError('VIDEO_UNAVAILABLE', 'Video is unavailable (private).', 'private'), 404, 'VIDEO_UNAVAILABLE'],
      [appError('NO_SUBTITLES', 'none'), 404, 'NO_SUBTITLES'],
      [appError('LANGUAGE_NOT_AVAILABLE', 'Available: de'), 404, 'LANGUAGE_NOT_AVAILABLE'],
      [appError('UPSTREAM_BLOCKED', 'bot check', 'bot_check'), 503, 'UPSTREAM_BLOCKED'],
      [appError('UPSTREAM_TIMEOUT', 'slow'), 504, 'UPSTREAM_TIMEOUT'],
      [appError('UPSTREAM_ERROR', 'garbled'), 502, 'UPSTREAM_ERROR'],
    ] as const;
    for (const [error, status, code] of cases) {
      gw.backends.handlers.getTranscript = async () => {
        throw error;
      };
      const res = await extract({ url: VIDEO_URL });
      expect(res.statusCode).toBe(status);
      expect(res.json().error).toMatchObject({
        code,
        message: error.message,
        request_id: res.headers['x-request-id'],
      });
      if (error.reason) expect(res.json().error.reason).toBe(error.reason);
      expect(res.headers['x-ratelimit-limit']).toBe('100');
    }
  });

  it('an unexpected failure is 500 INTERNAL_ERROR without internals, and the request is not counted', async () => {
    gw.backends.handlers.getTranscript = async () => {
      throw new Error('ECONNREFUSED 10.0.0.7:6379 secret-host');
    };
    const res = await extract({ url: VIDEO_URL });
    expect(res.statusCode).toBe(500);
    expect(res.json().error.code).toBe('INTERNAL_ERROR');
    expect(res.body).not.toContain('secret-host');
    expect(res.body).not.toContain('ECONNREFUSED');
    expect(res.json().error.request_id).toBe(res.headers['x-request-id']);
    expect(gw.access.refunds).toEqual(['acc_free']);
    expect(gw.access.used.get('acc_free')).toBe(0);
  });
});

describe('extract output formats', () => {
  const segments = [
    { text: 'First <b>bold</b> line', start: 0, duration: 1.25 },
    { text: 'two\n\nparagraphs --> arrow', start: 1.25, duration: 2 },
    { text: 'an hour in', start: 3600.5, duration: 1 },
  ];
  beforeEach(() => {
    gw.backends.handlers.getTranscript = async (req) => transcript(req.videoId, { segments });
  });

  it('srt: text/srt, strict SubRip, end = start + duration', async () => {
    const res = await extract({ url: VIDEO_URL, format: 'srt' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/srt; charset=utf-8');
    expect(res.headers['x-request-id']).toBeTruthy();
    expect(res.headers['x-ratelimit-remaining']).toBe('99');
    const cues = parseSrtStrict(res.body);
    expect(cues.map((c) => [c.startMs, c.endMs])).toEqual([
      [0, 1250],
      [1250, 3250],
      [3_600_500, 3_601_500],
    ]);
    expect(res.body).toContain('00:00:01,250 --> 00:00:03,250\ntwo\nparagraphs -> arrow\n');
  });

  it('vtt: text/vtt, parses with zero errors in the strict parser', async () => {
    const res = await extract({ url: VIDEO_URL, format: 'vtt' });
    expect(res.headers['content-type']).toBe('text/vtt; charset=utf-8');
    expect(res.body.startsWith('WEBVTT\n\n00:00:00.000 --> 00:00:01.250\n')).toBe(true);
    const parsed = new WebVTTParser(require('webvtt-parser/html-entities.json')).parse(res.body, 'metadata');
    expect(parsed.errors).toEqual([]);
    expect(parsed.cues).toHaveLength(3);
  });

  it('txt: text/plain, one line per segment', async () => {
    const res = await extract({ url: VIDEO_URL, format: 'txt' });
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.body).toBe('First bold line\ntwo paragraphs -> arrow\nan hour in\n');
  });

  it('md: text/markdown with [M:SS] prefixes, and without them in plain-text mode', async () => {
    const timed = await extract({ url: VIDEO_URL, format: 'md' });
    expect(timed.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(timed.body).toBe(
      `# Video ${VIDEO}\n\n**Channel:** Channel  \n**Duration:** 2:05\n\n## Transcript\n\n` +
        '[0:00] First bold line\n[0:01] two paragraphs -> arrow\n[1:00:00] an hour in\n',
    );
    const plain = await extract({ url: VIDEO_URL, format: 'md', include_timestamps: false });
    expect(
      plain.body.endsWith('## Transcript\n\nFirst bold line\ntwo paragraphs -> arrow\nan hour in\n'),
    ).toBe(true);
  });

  it('an error in a document format is still the JSON error body', async () => {
    gw.backends.handlers.getTranscript = async () => {
      throw appError('NO_SUBTITLES', 'none');
    };
    const res = await extract({ url: VIDEO_URL, format: 'srt' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.json().error.code).toBe('NO_SUBTITLES');
  });
});

describe('POST /api/v1/extract: who translated, and how sure the language is', () => {
  it('passes translated_by and language_confidence through, and omits them when unset', async () => {
    gw.backends.handlers.getTranscript = async (req) => ({
      ...transcript(req.videoId),
      translatedFrom: 'en',
      translatedBy: 'model',
      languageConfidence: 'low',
    });
    const res = await extract({ url: VIDEO_URL, language: 'fr', translate: true, force_refresh: true });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      translated_from: 'en',
      translated_by: 'model',
      language_confidence: 'low',
    });
    gw.backends.handlers.getTranscript = async (req) => transcript(req.videoId);
    const plain = await extract({ url: VIDEO_URL, force_refresh: true });
    expect(plain.json()).not.toHaveProperty('translated_by');
    expect(plain.json()).not.toHaveProperty('language_confidence');
  });
});

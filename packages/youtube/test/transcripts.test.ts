import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FakeYouTube } from '@subx/testing/fake-youtube';
import { videoIds } from '@subx/testing/fake-youtube';
import {
  MODES,
  callLog,
  clientFor,
  errorOf,
  roundTrips,
  setup,
  timedFetch,
  type TimedCall,
} from './support.ts';

const MANUAL_EN = [
  { text: 'Welcome to The Great War.', start: 0, duration: 2.5 },
  { text: 'Tom & Jerry didn\'t say "hello"', start: 2.5, duration: 3 },
  { text: 'This is really important', start: 5.5, duration: 2 },
  { text: '- First speaker - Second speaker', start: 7.5, duration: 2.5 },
  { text: 'Zürich, 1919 — the winter', start: 11.5, duration: 3 },
  { text: '5 < 7 and 9 > 3', start: 14.5, duration: 2 },
  { text: 'The end.', start: 16.5, duration: 3.5 },
];

const BASE_METADATA = {
  title: 'The Tide Is Turning - Russian Civil War Fall 1919 I THE GREAT WAR 1919',
  channel: 'The Great War',
  channelId: 'UCUcyEsEjhPEDf69RRVhRh4A',
  duration: 1509,
  uploadDate: '20191014',
};

describe.each(MODES)('getTranscript (fake platform: %s)', (mode) => {
  let fake: FakeYouTube;
  beforeAll(async () => {
    fake = await setup(mode);
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  it('gets the track list from VISIONOS and base metadata from a masked WEB /player sent with the timedtext GET', async () => {
    const yt = clientFor(fake);
    const t = await yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
    expect(t).toMatchObject({ language: 'en', subtitleType: 'manual', segments: MANUAL_EN });
    expect(t.translatedFrom).toBeUndefined();
    expect(t.metadata).toMatchObject(BASE_METADATA);
    expect(callLog(fake)[0]).toBe('player:VISIONOS');
    expect(callLog(fake).slice(1).sort()).toEqual(['player:WEB:masked', 'timedtext:']);
    expect(yt.upstreamCalls).toBe(3);
    const tt = fake.requests.find((r) => r.endpoint === 'timedtext');
    expect(tt?.query).toMatchObject({ v: 'F1xioXWb8CY', lang: 'en', fmt: 'json3' });
    expect(tt?.query.kind).toBeUndefined();
    expect(tt?.query.exp).toBeUndefined();
  });

  it('costs 2 sequential round trips cold, with base metadata', async () => {
    const timed: TimedCall[] = [];
    fake.setLatency(40);
    try {
      const yt = clientFor(fake, {}, { fetch: timedFetch(timed) });
      const t = await yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
      expect(t.metadata.uploadDate).toBe('20191014');
    } finally {
      fake.setLatency(0);
    }
    expect(timed).toHaveLength(3);
    expect(roundTrips(timed)).toBe(2);
  });

  it('sends the consent cookie, the client headers, hl=en/UTC and no signatureTimestamp to mobile clients', async () => {
    await clientFor(fake).getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
    const player = fake.requests[0];
    expect(player?.headers.cookie).toContain('SOCS=CAI');
    expect(player?.headers['x-youtube-client-name']).toBe('101');
    expect(player?.body).toMatchObject({
      videoId: 'F1xioXWb8CY',
      context: { client: { clientName: 'VISIONOS', hl: 'en', timeZone: 'UTC', utcOffsetMinutes: 0 } },
    });
    const body = player?.body as { playbackContext: { contentPlaybackContext: Record<string, unknown> } };
    expect(body.playbackContext.contentPlaybackContext.signatureTimestamp).toBeUndefined();
  });

  it('fetches the caption body with the answering client’s user agent and the watch page as Referer', async () => {
    await clientFor(fake).getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
    const tt = fake.requests.find((r) => r.endpoint === 'timedtext');
    expect(tt?.headers['user-agent']).toContain('Safari'); // VISIONOS's
    expect(tt?.headers.referer).toBe('https://www.youtube.com/');
  });

  it('adds watch-next to the first round trip only when an opt-in field needs it', async () => {
    const yt = clientFor(fake);
    const t = await yt.getTranscript({
      videoId: videoIds.manualAndAuto,
      language: 'en',
      include: [
        'like_count',
        'comment_count',
        'chapters',
        'description',
        'tags',
        'categories',
        'view_count',
        'is_live',
        'was_live',
      ],
    });
    expect(callLog(fake).sort()).toEqual(['next:WEB', 'player:VISIONOS', 'player:WEB:masked', 'timedtext:']);
    expect(t.metadata.likeCount).toBe(8205);
    expect(t.metadata.commentCount).toBe(477);
    expect(t.metadata.categories).toEqual(['Education']);
    expect(t.metadata.viewCount).toBeGreaterThan(0);
    expect(t.metadata.isLive).toBe(false);
    expect(t.metadata.wasLive).toBe(false);
    expect(t.metadata.chapters?.[0]).toEqual({ title: 'The Great Siberian Ice March', startTime: 270.16 });
  });

  it('picks the auto-generated track of the base language when no manual one exists', async () => {
    const t = await clientFor(fake).getTranscript({ videoId: videoIds.autoOnlyFrench, language: 'fr-CA' });
    expect(t).toMatchObject({ language: 'fr', subtitleType: 'auto_generated' });
    expect(t.segments[0]?.text).toBe('Synthetic caption 1 of cJ9to6EmElQ auto-generated fr');
    expect(fake.requests.find((r) => r.endpoint === 'timedtext')?.query.kind).toBe('asr');
  });

  it('falls back to the exact auto-generated track and removes the rolling repetition', async () => {
    const t = await clientFor(fake).getTranscript({ videoId: videoIds.autoOnly, language: 'en' });
    expect(t).toMatchObject({ language: 'en', subtitleType: 'auto_generated' });
    expect(t.segments.map((s) => s.text).join(' ')).toBe(
      "so in nineteen nineteen the white army retreats east across siberia [Music] and it's cold out there",
    );
  });

  it('matches the base language: en-GB asks get the en track', async () => {
    const t = await clientFor(fake).getTranscript({ videoId: videoIds.manualAndAuto, language: 'en-GB' });
    expect(t).toMatchObject({ language: 'en', subtitleType: 'manual' });
  });

  it('lists the available languages when the language is missing', async () => {
    const err = await errorOf(
      clientFor(fake).getTranscript({ videoId: videoIds.manualAndAuto, language: 'fr' }),
    );
    expect(err).toMatchObject({ code: 'LANGUAGE_NOT_AVAILABLE', retryable: false });
    expect(err.details).toEqual({ available_languages: ['en'] });
  });

  it('translates from the best track with tlang when translate is true', async () => {
    const t = await clientFor(fake).getTranscript({
      videoId: videoIds.manualAndAuto,
      language: 'fr',
      translate: true,
    });
    expect(t).toMatchObject({
      language: 'fr',
      translatedFrom: 'en',
      translatedBy: 'platform',
      subtitleType: 'auto_generated',
    });
    expect(fake.requests.find((r) => r.endpoint === 'timedtext')?.query).toMatchObject({
      lang: 'en',
      tlang: 'fr',
    });
    expect(t.segments[0]?.text).toBe('[fr from en] Synthetic caption 1 of F1xioXWb8CY en');
  });

  it('a translation the platform refuses (empty tlang answer, source fine) is LANGUAGE_NOT_AVAILABLE translation_unavailable', async () => {
    fake.setTlangRefused(true);
    const err = await errorOf(
      clientFor(fake).getTranscript({ videoId: videoIds.manualAndAuto, language: 'fr', translate: true }),
    );
    expect(err).toMatchObject({
      code: 'LANGUAGE_NOT_AVAILABLE',
      reason: 'translation_unavailable',
      retryable: false,
    });
    expect((err.details as { available_languages: string[] }).available_languages).toContain('en');
    // The refused translation, then the source read to tell a refusal from a block.
    const asked = fake.requests.filter((r) => r.endpoint === 'timedtext').map((r) => r.query.tlang ?? '-');
    expect(asked).toEqual(['fr', '-']);
  });

  it('a refused translation with a translator: the source segments translated, timings kept', async () => {
    fake.setTlangRefused(true);
    const seen: { texts: readonly string[]; target: string }[] = [];
    const translator = {
      translate: async (texts: readonly string[], target: string) => {
        seen.push({ texts, target });
        return texts.map((t) => `(${target}) ${t}`);
      },
    };
    const source = await clientFor(fake).getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
    const t = await clientFor(fake, {}, { translator }).getTranscript({
      videoId: videoIds.manualAndAuto,
      language: 'fr',
      translate: true,
    });
    expect(t).toMatchObject({ language: 'fr', translatedFrom: 'en', translatedBy: 'model' });
    expect(t.segments).toEqual(source.segments.map((s) => ({ ...s, text: `(fr) ${s.text}` })));
    expect(seen).toEqual([{ texts: source.segments.map((s) => s.text), target: 'fr' }]);
  });

  it('a translator answering another number of texts is UPSTREAM_ERROR, never a misaligned answer', async () => {
    fake.setTlangRefused(true);
    const translator = { translate: async () => ['only one'] };
    const err = await errorOf(
      clientFor(fake, {}, { translator }).getTranscript({
        videoId: videoIds.manualAndAuto,
        language: 'fr',
        translate: true,
      }),
    );
    expect(err).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true });
  });

  it('an empty translation whose source is empty too stays UPSTREAM_BLOCKED empty_caption_body', async () => {
    fake.failNext({ kind: 'emptyCaptionBody' }, { endpoint: 'timedtext' });
    fake.failNext({ kind: 'emptyCaptionBody' }, { endpoint: 'timedtext' });
    const err = await errorOf(
      clientFor(fake).getTranscript({ videoId: videoIds.manualAndAuto, language: 'fr', translate: true }),
    );
    expect(err).toMatchObject({ code: 'UPSTREAM_BLOCKED', reason: 'empty_caption_body' });
  });

  it('never translates into the source language: en with translate gets the en track itself', async () => {
    await clientFor(fake).getTranscript({ videoId: videoIds.manualAndAuto, language: 'en', translate: true });
    expect(fake.requests.find((r) => r.endpoint === 'timedtext')?.query.tlang).toBeUndefined();
  });

  it('retries a translated track that draws a 429 once in another format', async () => {
    fake.failNext({ kind: 'status', status: 429 }, { endpoint: 'timedtext' });
    const t = await clientFor(fake).getTranscript({
      videoId: videoIds.manualAndAuto,
      language: 'fr',
      translate: true,
    });
    expect(t.segments.length).toBeGreaterThan(0);
    const fmts = fake.requests.filter((r) => r.endpoint === 'timedtext').map((r) => r.query.fmt);
    expect(fmts).toEqual(['json3', 'srv3']);
  });

  it('an untranslated track that draws a 429 is UPSTREAM_BLOCKED http_429, not retried without proxies', async () => {
    fake.failNext({ kind: 'status', status: 429 }, { endpoint: 'timedtext' });
    const err = await errorOf(
      clientFor(fake).getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' }),
    );
    expect(err).toMatchObject({ code: 'UPSTREAM_BLOCKED', reason: 'http_429', retryable: true });
    expect(fake.count('timedtext')).toBe(1);
  });

  it('maps an empty caption body to UPSTREAM_BLOCKED empty_caption_body', async () => {
    fake.failNext({ kind: 'emptyCaptionBody' }, { endpoint: 'timedtext' });
    const err = await errorOf(
      clientFor(fake).getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' }),
    );
    expect(err).toMatchObject({ code: 'UPSTREAM_BLOCKED', reason: 'empty_caption_body', retryable: true });
  });

  it.each(['srv3', 'srv1'] as const)('parses a %s body even when json3 was asked for', async (format) => {
    fake.setCaptionFormat(format);
    const t = await clientFor(fake).getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
    const expected =
      format === 'srv1'
        ? MANUAL_EN.map((s) => (s.text === 'The end.' ? { ...s, duration: 0 } : s))
        : MANUAL_EN;
    expect(t.segments).toEqual(expected);
  });

  it('skips a client whose caption URLs are gated and uses the next one on the ladder', async () => {
    // GJLlxj_dtq8: the VISIONOS asset in replay carries exp=xpe; in today's mode every mobile URL is clean
    const t = await clientFor(fake).getTranscript({ videoId: videoIds.poTokenOnWeb, language: 'en' });
    expect(t.segments).toEqual(MANUAL_EN);
    expect(t.metadata.uploadDate).toBe('20180802');
    const tt = fake.requests.filter((r) => r.endpoint === 'timedtext');
    expect(tt).toHaveLength(1);
    expect(tt[0]?.query.exp ?? '').not.toMatch(/xp[ev]/);
  });

  it('coalesces identical concurrent requests into one upstream call', async () => {
    const yt = clientFor(fake);
    fake.setLatency(30);
    const [a, b, c] = await Promise.all([
      yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' }),
      yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' }),
      yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en-US' }),
    ]);
    fake.setLatency(0);
    expect(b.segments).toEqual(a.segments);
    expect(c.segments).toEqual(a.segments);
    expect(callLog(fake).filter((c) => c === 'player:VISIONOS')).toHaveLength(1);
    expect(fake.count('timedtext')).toBe(1);
  });

  it('counts every upstream call’s outcome by client and endpoint', async () => {
    const yt = clientFor(fake);
    await yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
    expect(yt.upstreamStats.total({ client: 'VISIONOS', endpoint: 'player', outcome: 'ok' })).toBe(1);
    expect(yt.upstreamStats.total({ client: 'WEB', endpoint: 'player', outcome: 'ok' })).toBe(1);
    expect(yt.upstreamStats.total({ endpoint: 'timedtext', outcome: 'ok' })).toBe(1);
    fake.failNext({ kind: 'botCheck' }, { endpoint: 'player' });
    await yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
    expect(yt.upstreamStats.total({ outcome: 'bot_check' })).toBe(1);
  });
});

describe.each(MODES)('unavailable videos and platform errors (fake platform: %s)', (mode) => {
  let fake: FakeYouTube;
  beforeAll(async () => {
    fake = await setup(mode);
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  it.each([
    [videoIds.noCaptions, 'NO_SUBTITLES', undefined],
    [videoIds.wasLive, 'NO_SUBTITLES', undefined],
    [videoIds.private, 'VIDEO_UNAVAILABLE', 'private'],
    [videoIds.geoBlocked, 'VIDEO_UNAVAILABLE', 'geo_blocked'],
    [videoIds.membersOnly, 'VIDEO_UNAVAILABLE', 'members_only'],
    [videoIds.paid, 'VIDEO_UNAVAILABLE', 'paid'],
    [videoIds.musicPremium, 'VIDEO_UNAVAILABLE', 'paid'],
    [videoIds.ageRestrictedMobile, 'VIDEO_UNAVAILABLE', 'age_restricted'],
    [videoIds.upcomingLive, 'VIDEO_UNAVAILABLE', 'upcoming_live'],
  ])('%s → %s %s after one request', async (id, code, reason) => {
    const err = await errorOf(clientFor(fake).getTranscript({ videoId: id, language: 'en' }));
    expect([err.code, err.reason, err.retryable]).toEqual([code, reason, false]);
    expect(fake.count()).toBe(1);
  });

  it.each([
    [videoIds.postLive, 'post_live', 300],
    [videoIds.liveNow, 'live', 900],
  ])(
    '%s (a stream without captions yet) → retryable VIDEO_PROCESSING %s with Retry-After, not NO_SUBTITLES',
    async (id, reason, retryAfter) => {
      const err = await errorOf(clientFor(fake).getTranscript({ videoId: id, language: 'en' }));
      expect([err.code, err.reason, err.retryable]).toEqual(['VIDEO_PROCESSING', reason, true]);
      expect(err.retryAfterSeconds).toBe(retryAfter);
      expect(fake.count()).toBe(1);
      // nor is its audio whole yet: transcription waits too
      const audio = await errorOf(clientFor(fake).getAudio({ videoId: id }));
      expect([audio.code, audio.reason]).toEqual(['VIDEO_PROCESSING', reason]);
    },
  );

  it.each([videoIds.invalid, videoIds.nonexistent, 'zzzzzzzzzzz'])(
    '%s → VIDEO_NOT_FOUND only once a second client confirms it (2 requests)',
    async (id) => {
      const err = await errorOf(clientFor(fake).getTranscript({ videoId: id, language: 'en' }));
      expect([err.code, err.retryable]).toEqual(['VIDEO_NOT_FOUND', false]);
      expect(callLog(fake)).toEqual(['player:VISIONOS', 'player:ANDROID']);
    },
  );

  it('an ERROR from VISIONOS alone is confirmed by ANDROID, which serves the video', async () => {
    fake.failNext(
      { kind: 'playability', status: 'ERROR', reason: 'This video is unavailable' },
      { endpoint: 'player', client: 'VISIONOS' },
    );
    const t = await clientFor(fake).getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
    expect(t.segments).toEqual(MANUAL_EN);
    expect(callLog(fake)[1]).toBe('player:ANDROID');
  });

  it('a bot check on every client is UPSTREAM_BLOCKED bot_check after one fresh session and every client', async () => {
    const err = await errorOf(clientFor(fake).getTranscript({ videoId: videoIds.botCheck, language: 'en' }));
    expect(err).toMatchObject({ code: 'UPSTREAM_BLOCKED', reason: 'bot_check', retryable: true });
    const players = fake.requests.filter((r) => r.endpoint === 'player').map((r) => r.clientName);
    expect(players).toEqual(['VISIONOS', 'VISIONOS', 'ANDROID', 'IOS']);
  });

  it.each([
    [{ kind: 'botCheck' }, 'bot_check'],
    [{ kind: 'pageReload' }, 'page_reload'],
    [{ kind: 'loginRequired' }, 'login_required'],
  ] as const)('%o once is retried on a fresh session with a new visitor', async (failure, _reason) => {
    const yt = clientFor(fake, { YOUTUBE_SESSIONS: '1' });
    await yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' }); // the session gets a visitor
    fake.reset();
    fake.failNext(failure, { endpoint: 'player', client: 'VISIONOS' });
    const t = await yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
    expect(t.segments).toEqual(MANUAL_EN);
    const players = fake.requests.filter((r) => r.endpoint === 'player' && r.clientName === 'VISIONOS');
    expect(players).toHaveLength(2);
    expect(players[0]?.headers['x-goog-visitor-id']).toBeTruthy();
    expect(players[1]?.headers['x-goog-visitor-id']).not.toBe(players[0]?.headers['x-goog-visitor-id']);
  });

  it('every client blocked on "the page needs to be reloaded" is a retryable UPSTREAM_BLOCKED', async () => {
    fake.failNext({ kind: 'pageReload' }, { endpoint: 'player', times: 10 });
    const err = await errorOf(
      clientFor(fake).getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' }),
    );
    expect(err).toMatchObject({ code: 'UPSTREAM_BLOCKED', reason: 'page_reload', retryable: true });
  });

  it('an unknown playability status with sub-reasons is VIDEO_UNAVAILABLE unplayable', async () => {
    const err = await errorOf(
      clientFor(fake).getTranscript({ videoId: videoIds.unplayable, language: 'en' }),
    );
    expect(err).toMatchObject({ code: 'VIDEO_UNAVAILABLE', reason: 'unplayable' });
    expect(err.message).toContain('Custom Reason');
  });

  it.each([
    [{ kind: 'captcha' }, 'captcha'],
    [{ kind: 'status', status: 429 }, 'http_429'],
  ] as const)(
    'an IP-level block (%o) ends the ladder at once: no other client is asked',
    async (failure, reason) => {
      fake.failNext(failure, { endpoint: 'player', times: 10 });
      const err = await errorOf(
        clientFor(fake).getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' }),
      );
      expect(err).toMatchObject({ code: 'UPSTREAM_BLOCKED', reason, retryable: true });
      expect(fake.count('player')).toBe(1);
    },
  );

  it('retries 5xx and dropped connections, then succeeds', async () => {
    fake.failNext({ kind: 'status', status: 503 }, { endpoint: 'player' });
    fake.failNext({ kind: 'reset' }, { endpoint: 'timedtext' });
    const t = await clientFor(fake).getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
    expect(t.segments.length).toBe(7);
    expect(fake.requests.filter((r) => r.clientName === 'VISIONOS')).toHaveLength(2);
    expect(fake.count('timedtext')).toBe(2);
  });

  it('gives up after YOUTUBE_RETRIES and reports UPSTREAM_ERROR', async () => {
    fake.failNext({ kind: 'status', status: 500 }, { endpoint: 'player', times: 3 });
    const yt = clientFor(fake, {
      YOUTUBE_RETRIES: '2',
      YOUTUBE_CLIENTS: JSON.stringify({ order: ['VISIONOS'] }),
    });
    const err = await errorOf(yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' }));
    expect(err).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true });
    expect(fake.count('player')).toBe(3);
  });

  it('does not retry a 4xx answer; a retired client version (400) falls through to the next client', async () => {
    fake.failNext({ kind: 'status', status: 400 }, { endpoint: 'player' });
    const t = await clientFor(fake).getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
    expect(t.metadata.uploadDate).toBe('20191014');
    expect(
      fake.requests
        .filter((r) => r.endpoint === 'player' && !r.query.$fields)
        .map((r) => `${r.clientName}:${r.status}`),
    ).toEqual(['VISIONOS:400', 'ANDROID:200']);
  });

  it('times out a slow answer with UPSTREAM_TIMEOUT', async () => {
    fake.failNext({ kind: 'delay', ms: 600 }, { endpoint: 'player' });
    const yt = clientFor(fake, { YOUTUBE_TIMEOUT_MS: '150' });
    const started = Date.now();
    const err = await errorOf(yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' }));
    expect(err).toMatchObject({ code: 'UPSTREAM_TIMEOUT', retryable: true });
    expect(Date.now() - started).toBeLessThan(590);
  });

  it('reports unparseable JSON as UPSTREAM_ERROR', async () => {
    fake.failNext({ kind: 'status', status: 200, body: '<html>not json' }, { endpoint: 'player' });
    const yt = clientFor(fake, { YOUTUBE_CLIENTS: JSON.stringify({ order: ['VISIONOS'] }) });
    const err = await errorOf(yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' }));
    expect(err.code).toBe('UPSTREAM_ERROR');
  });

  it('refuses an answer larger than the endpoint’s cap with UPSTREAM_ERROR, without reading it whole', async () => {
    const huge = JSON.stringify({ pad: 'x'.repeat(300_000) });
    fake.failNext({ kind: 'status', status: 200, body: huge }, { endpoint: 'player' });
    const yt = clientFor(fake, {
      YOUTUBE_MAX_BODY_BYTES: '65536',
      YOUTUBE_CLIENTS: JSON.stringify({ order: ['VISIONOS'] }),
    });
    const err = await errorOf(yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' }));
    expect(err).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true });
    expect(err.message).toContain('larger than 65536 bytes');
    expect(yt.upstreamStats.total({ outcome: 'too_large' })).toBe(1);
  });
});

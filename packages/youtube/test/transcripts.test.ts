import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FakeYouTube } from '@subx/testing/fake-youtube';
import { videoIds } from '@subx/testing/fake-youtube';
import { clientFor, errorOf, setup } from './helpers.ts';

let fake: FakeYouTube;
beforeAll(async () => {
  fake = await setup();
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

const MANUAL_EN = [
  { text: 'Welcome to The Great War.', start: 0, duration: 2.5 },
  { text: 'Tom & Jerry didn\'t say "hello"', start: 2.5, duration: 3 },
  { text: 'This is really important', start: 5.5, duration: 2 },
  { text: '- First speaker - Second speaker', start: 7.5, duration: 2.5 },
  { text: 'Zürich, 1919 — the winter', start: 11.5, duration: 3 },
  { text: '5 < 7 and 9 > 3', start: 14.5, duration: 2 },
  { text: 'The end.', start: 16.5, duration: 3.5 },
];

describe('getTranscript', () => {
  it('returns the exact manual English track with metadata from the same player call: 2 upstream requests', async () => {
    const yt = clientFor(fake);
    const t = await yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
    expect(t.language).toBe('en');
    expect(t.subtitleType).toBe('manual');
    expect(t.translatedFrom).toBeUndefined();
    expect(t.segments).toEqual(MANUAL_EN);
    expect(t.metadata).toEqual({
      title: 'The Tide Is Turning - Russian Civil War Fall 1919 I THE GREAT WAR 1919',
      channel: 'The Great War',
      channelId: 'UCUcyEsEjhPEDf69RRVhRh4A',
      duration: 1509,
      uploadDate: '20191014',
      thumbnailUrl: 'https://i.ytimg.com/vi/F1xioXWb8CY/maxresdefault.jpg',
    });
    expect(fake.requests.map((r) => r.endpoint)).toEqual(['player', 'timedtext']);
    expect(yt.upstreamCalls).toBe(2);
    const tt = fake.requests[1];
    expect(tt?.query).toMatchObject({ v: 'F1xioXWb8CY', lang: 'en', fmt: 'json3' });
    expect(tt?.query.kind).toBeUndefined();
    expect(tt?.query.tlang).toBeUndefined();
  });

  it('sends the consent cookie, the client headers and hl=en/UTC in the context', async () => {
    await clientFor(fake).getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
    const player = fake.requests[0];
    expect(player?.headers.cookie).toContain('SOCS=CAI');
    expect(player?.headers['x-youtube-client-name']).toBe('1');
    expect(player?.body).toMatchObject({
      videoId: 'F1xioXWb8CY',
      context: { client: { clientName: 'WEB', hl: 'en', timeZone: 'UTC', utcOffsetMinutes: 0 } },
    });
  });

  it('adds watch-next in parallel only when an opt-in field needs it (3 requests)', async () => {
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
    expect(fake.requests.map((r) => r.endpoint).sort()).toEqual(['next', 'player', 'timedtext']);
    expect(t.metadata.likeCount).toBe(8205);
    expect(t.metadata.commentCount).toBe(477);
    expect(t.metadata.categories).toEqual(['Education']);
    expect(t.metadata.tags?.length).toBe(26);
    expect(t.metadata.viewCount).toBe(270075);
    expect(t.metadata.isLive).toBe(false);
    expect(t.metadata.wasLive).toBe(false);
    expect(t.metadata.description?.length).toBe(1983);
    expect(t.metadata.chapters?.[0]).toEqual({ title: 'The Great Siberian Ice March', startTime: 270.16 });
    expect(t.metadata.chapters?.length).toBeGreaterThan(1);
  });

  it('falls back to the exact auto-generated track and removes the rolling repetition', async () => {
    const t = await clientFor(fake).getTranscript({ videoId: videoIds.autoOnly, language: 'en' });
    expect(t.subtitleType).toBe('auto_generated');
    expect(t.language).toBe('en');
    expect(t.segments.map((s) => s.text).join(' ')).toBe(
      "so in nineteen nineteen the white army retreats east across siberia [Music] and it's cold out there",
    );
    expect(t.segments[0]).toEqual({ text: 'so in nineteen nineteen', start: 0.16, duration: 4.08 });
    expect(fake.requests.find((r) => r.endpoint === 'timedtext')?.query.kind).toBe('asr');
  });

  it('matches the base language: en-GB asks get the en track', async () => {
    const t = await clientFor(fake).getTranscript({ videoId: videoIds.manualAndAuto, language: 'en-GB' });
    expect(t.language).toBe('en');
    expect(t.subtitleType).toBe('manual');
  });

  it('picks the auto-generated track of the base language when no manual one exists', async () => {
    const t = await clientFor(fake).getTranscript({ videoId: videoIds.autoOnlyFrench, language: 'fr-CA' });
    expect(t).toMatchObject({ language: 'fr', subtitleType: 'auto_generated' });
    expect(t.segments[0]?.text).toBe('Synthetic caption 1 of cJ9to6EmElQ auto-generated fr');
  });

  it('lists the available languages when the language is missing', async () => {
    const err = await errorOf(
      clientFor(fake).getTranscript({ videoId: videoIds.manualAndAuto, language: 'fr' }),
    );
    expect(err.code).toBe('LANGUAGE_NOT_AVAILABLE');
    expect(err.details).toEqual({ available_languages: ['en'] });
    expect(err.retryable).toBe(false);
  });

  it('translates from the best track with tlang when translate is true', async () => {
    const t = await clientFor(fake).getTranscript({
      videoId: videoIds.manualAndAuto,
      language: 'fr',
      translate: true,
    });
    expect(t).toMatchObject({ language: 'fr', translatedFrom: 'en', subtitleType: 'auto_generated' });
    const q = fake.requests.find((r) => r.endpoint === 'timedtext')?.query;
    expect(q).toMatchObject({ lang: 'en', tlang: 'fr' });
    expect(q?.kind).toBeUndefined();
    expect(t.segments[0]?.text).toBe('[fr from en] Synthetic caption 1 of F1xioXWb8CY en');
  });

  it('never translates into the source language: en with translate gets the en track itself', async () => {
    await clientFor(fake).getTranscript({ videoId: videoIds.manualAndAuto, language: 'en', translate: true });
    expect(fake.requests.find((r) => r.endpoint === 'timedtext')?.query.tlang).toBeUndefined();
  });

  it('rejects a translation target the platform does not offer', async () => {
    const err = await errorOf(
      clientFor(fake).getTranscript({ videoId: videoIds.manualAndAuto, language: 'xx', translate: true }),
    );
    expect(err.code).toBe('LANGUAGE_NOT_AVAILABLE');
  });

  it('prefers the named manual track over auto-generated for German and strips the named-track id', async () => {
    const t = await clientFor(fake).getTranscript({ videoId: videoIds.germanNamedTrack, language: 'de' });
    expect(t).toMatchObject({ language: 'de', subtitleType: 'manual' });
    expect(fake.requests.find((r) => r.endpoint === 'timedtext')?.query.kind).toBeUndefined();
  });

  it('falls back to the next client when the WEB caption URLs need a PO token (3 requests)', async () => {
    const t = await clientFor(fake).getTranscript({ videoId: videoIds.poTokenOnWeb, language: 'en' });
    expect(t.segments).toEqual(MANUAL_EN);
    expect(fake.requests.map((r) => `${r.endpoint}:${r.clientName ?? ''}`)).toEqual([
      'player:WEB',
      'player:ANDROID',
      'timedtext:',
    ]);
    // metadata still comes from the WEB answer (microformat), no extra call
    expect(t.metadata.uploadDate).toBe('20180802');
    expect(t.metadata.title).toBe('Surface Go Review - It’s Awesome');
  });

  it('reports UPSTREAM_BLOCKED po_token when every client needs one', async () => {
    const yt = clientFor(fake, { YOUTUBE_CLIENTS: JSON.stringify({ order: ['WEB', 'VISIONOS'] }) });
    const err = await errorOf(yt.getTranscript({ videoId: videoIds.poTokenOnWeb, language: 'en' }));
    expect(err).toMatchObject({ code: 'UPSTREAM_BLOCKED', reason: 'po_token', retryable: true });
    expect(fake.count('timedtext')).toBe(0);
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

  it('gets metadata from the mobile answer plus one masked WEB call when the WEB answer is not first', async () => {
    const yt = clientFor(fake, { YOUTUBE_CLIENTS: JSON.stringify({ order: ['ANDROID', 'WEB'] }) });
    const t = await yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
    expect(t.metadata.uploadDate).toBe('20191014');
    const calls = fake.requests.map((r) => `${r.endpoint}:${r.clientName ?? ''}:${r.query.$fields ?? ''}`);
    expect(calls.sort()).toEqual(['player:ANDROID:', 'player:WEB:microformat,videoDetails', 'timedtext::']);
  });

  it('skips a client that answers with a different video and uses the next one', async () => {
    const yt = clientFor(fake, { YOUTUBE_CLIENTS: JSON.stringify({ order: ['ANDROID', 'WEB'] }) });
    const t = await yt.getTranscript({ videoId: videoIds.germanNamedTrack, language: 'de' });
    expect(t.metadata.title).toBe('Russlanddeutsche, die AfD und ich | Doku | NDR Story');
    expect(fake.requests.filter((r) => r.endpoint === 'player').map((r) => r.clientName)).toEqual([
      'ANDROID',
      'WEB',
    ]);
  });

  it('reports a different video from every client as a block', async () => {
    const yt = clientFor(fake, { YOUTUBE_CLIENTS: JSON.stringify({ order: ['ANDROID'] }) });
    const err = await errorOf(yt.getTranscript({ videoId: videoIds.germanNamedTrack, language: 'de' }));
    expect(err).toMatchObject({ code: 'UPSTREAM_BLOCKED', reason: 'bot_check' });
    expect(err.message).toContain('aQvGIIdgFDM');
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
    expect(a.segments).toEqual(b.segments);
    expect(c.segments).toEqual(a.segments);
    expect(fake.count('player')).toBe(1);
    expect(fake.count('timedtext')).toBe(1);
  });
});

describe('unavailable videos and platform errors', () => {
  it.each([
    [videoIds.noCaptions, 'NO_SUBTITLES', undefined],
    [videoIds.liveNow, 'NO_SUBTITLES', undefined],
    [videoIds.wasLive, 'NO_SUBTITLES', undefined],
    [videoIds.private, 'VIDEO_UNAVAILABLE', 'private'],
    [videoIds.geoBlocked, 'VIDEO_UNAVAILABLE', 'geo_blocked'],
    [videoIds.membersOnly, 'VIDEO_UNAVAILABLE', 'members_only'],
    [videoIds.paid, 'VIDEO_UNAVAILABLE', 'paid'],
    [videoIds.musicPremium, 'VIDEO_UNAVAILABLE', 'paid'],
    [videoIds.ageRestricted, 'VIDEO_UNAVAILABLE', 'age_restricted'],
    [videoIds.upcomingLive, 'VIDEO_UNAVAILABLE', 'upcoming_live'],
    [videoIds.invalid, 'VIDEO_NOT_FOUND', undefined],
    [videoIds.nonexistent, 'VIDEO_NOT_FOUND', undefined],
    ['zzzzzzzzzzz', 'VIDEO_NOT_FOUND', undefined],
  ])('%s → %s %s after one request', async (id, code, reason) => {
    const err = await errorOf(clientFor(fake).getTranscript({ videoId: id, language: 'en' }));
    expect(err.code).toBe(code);
    expect(err.reason).toBe(reason);
    expect(err.retryable).toBe(false);
    expect(fake.count()).toBe(1);
  });

  it('a bot check on every client is UPSTREAM_BLOCKED bot_check after trying each client', async () => {
    const err = await errorOf(clientFor(fake).getTranscript({ videoId: videoIds.botCheck, language: 'en' }));
    expect(err).toMatchObject({ code: 'UPSTREAM_BLOCKED', reason: 'bot_check', retryable: true });
    expect(fake.requests.map((r) => r.clientName)).toEqual(['WEB', 'ANDROID', 'VISIONOS']);
  });

  it('a bot check on the first client only falls through to the next client', async () => {
    fake.failNext({ kind: 'botCheck' }, { endpoint: 'player' });
    const t = await clientFor(fake).getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
    expect(t.segments.length).toBe(7);
    expect(fake.requests.filter((r) => r.endpoint === 'player').map((r) => r.clientName)).toEqual([
      'WEB',
      'ANDROID',
    ]);
  });

  it('an unknown playability status with sub-reasons is VIDEO_UNAVAILABLE unplayable', async () => {
    const err = await errorOf(
      clientFor(fake).getTranscript({ videoId: videoIds.unplayable, language: 'en' }),
    );
    expect(err).toMatchObject({ code: 'VIDEO_UNAVAILABLE', reason: 'unplayable' });
    expect(err.message).toContain('Custom Reason');
  });

  it('a captcha page is UPSTREAM_BLOCKED captcha', async () => {
    fake.failNext({ kind: 'captcha' }, { endpoint: 'player' });
    const err = await errorOf(
      clientFor(fake).getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' }),
    );
    expect(err).toMatchObject({ code: 'UPSTREAM_BLOCKED', reason: 'captcha' });
  });

  it('HTTP 429 is UPSTREAM_BLOCKED http_429 and is not retried without a proxy pool', async () => {
    fake.failNext({ kind: 'status', status: 429 }, { endpoint: 'timedtext' });
    const err = await errorOf(
      clientFor(fake).getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' }),
    );
    expect(err).toMatchObject({ code: 'UPSTREAM_BLOCKED', reason: 'http_429', retryable: true });
    expect(fake.count('timedtext')).toBe(1);
  });

  it('retries 5xx and dropped connections, then succeeds', async () => {
    fake.failNext({ kind: 'status', status: 503 }, { endpoint: 'player' });
    fake.failNext({ kind: 'reset' }, { endpoint: 'timedtext' });
    const t = await clientFor(fake).getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
    expect(t.segments.length).toBe(7);
    expect(fake.count('player')).toBe(2);
    expect(fake.count('timedtext')).toBe(2);
  });

  it('gives up after YOUTUBE_RETRIES and reports UPSTREAM_ERROR', async () => {
    fake.failNext({ kind: 'status', status: 500 }, { endpoint: 'player', times: 3 });
    const yt = clientFor(fake, { YOUTUBE_RETRIES: '2', YOUTUBE_CLIENTS: JSON.stringify({ order: ['WEB'] }) });
    const err = await errorOf(yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' }));
    expect(err).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true });
    expect(fake.count('player')).toBe(3);
  });

  it('does not retry a 4xx answer; a retired client version (400) falls through to the next client', async () => {
    fake.failNext({ kind: 'status', status: 400 }, { endpoint: 'player' });
    const t = await clientFor(fake).getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
    expect(t.language).toBe('en');
    // the ANDROID answer has no microformat, so one masked WEB call fetches the upload date
    expect(t.metadata.uploadDate).toBe('20191014');
    expect(
      fake.requests
        .filter((r) => r.endpoint === 'player')
        .map((r) => `${r.clientName}:${r.status}:${r.query.$fields ?? ''}`),
    ).toEqual(['WEB:400:', 'ANDROID:200:', 'WEB:200:microformat,videoDetails']);
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
    const err = await errorOf(
      clientFor(fake, { YOUTUBE_CLIENTS: JSON.stringify({ order: ['WEB'] }) }).getTranscript({
        videoId: videoIds.manualAndAuto,
        language: 'en',
      }),
    );
    expect(err.code).toBe('UPSTREAM_ERROR');
  });
});

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  buildCommentsContinuation,
  fixturesDir,
  buildPlaylistContinuation,
  defaultRoutes,
  loadFixture,
  parseCommentsContinuation,
  parsePlaylistContinuation,
  playlistIds,
  startFakeYouTube,
  videoIds,
  type FakeYouTube,
  type FixtureRef,
} from '@subx/testing/fake-youtube';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const VERSIONS: Record<string, string> = {
  WEB: '2.20261115.01.00',
  MWEB: '2.20261115.01.00',
  VISIONOS: '1.04',
  ANDROID: '20.10.38',
  IOS: '20.10.4',
};

/** The recorded tokens NewPipe sent (read from the mocks' own request bodies). */
const RECORDED_PLAYLIST_TOKEN = recordedToken('newpipe/62b3c3b/playlist/learning/generated_mock_3.json');
const RECORDED_COMMENTS_TOKEN = recordedToken(
  'newpipe/43f8e6e/youtubecommentsextractor/replies/generated_mock_3.json',
);

function recordedToken(file: string): string {
  const mock = JSON.parse(readFileSync(`${fixturesDir()}${file}`, 'utf8')) as {
    request: { dataToSend: number[] };
  };
  return (JSON.parse(Buffer.from(mock.request.dataToSend).toString('utf8')) as { continuation: string })
    .continuation;
}

let fake: FakeYouTube;

async function post(
  endpoint: string,
  body: Json,
  init: { query?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; json: Json; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${fake.url}/youtubei/v1/${endpoint}${init.query ?? ''}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...init.headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: JSON.parse(text) as Json, ms: performance.now() - started };
}

const context = (clientName: string, extra: Json = {}): Json => ({
  client: { clientName, clientVersion: VERSIONS[clientName] ?? '1.0', hl: 'en', gl: 'US', ...extra },
});

const player = (
  videoId: string,
  clientName: string,
  opts: { sts?: boolean; query?: string; headers?: Record<string, string>; client?: Json } = {},
) =>
  post(
    'player',
    {
      context: context(clientName, opts.client),
      videoId,
      ...(opts.sts ? { playbackContext: { contentPlaybackContext: { signatureTimestamp: 20400 } } } : {}),
    },
    { ...(opts.query ? { query: opts.query } : {}), ...(opts.headers ? { headers: opts.headers } : {}) },
  );

const tracks = (p: Json): Json[] => p.captions?.playerCaptionsTracklistRenderer?.captionTracks ?? [];

async function get(path: string, headers: Record<string, string> = {}) {
  const started = performance.now();
  const res = await fetch(`${fake.url}${path}`, { headers });
  const body = await res.text();
  return { status: res.status, body, type: res.headers.get('content-type'), ms: performance.now() - started };
}

/** A caption URL pointed at the fake (recorded URLs name www.youtube.com), with parameters set. */
const local = (baseUrl: string, set: Record<string, string> = {}): string => {
  const u = new URL(baseUrl, 'https://www.youtube.com');
  for (const [k, v] of Object.entries(set)) u.searchParams.set(k, v);
  return `${u.pathname}${u.search}`;
};

beforeAll(async () => {
  fake = await startFakeYouTube({ mode: 'today', gatedCaptionDelayMs: 0 });
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  fake.setMode('today');
  fake.setLatency(0);
  fake.setGatedCaptionDelay(0);
  fake.setMinWebClientVersion(undefined);
});

describe('modes', () => {
  it('defaults to today and switches at run time', async () => {
    const other = await startFakeYouTube();
    try {
      expect(other.mode).toBe('today');
      other.setMode('replay');
      expect(other.mode).toBe('replay');
    } finally {
      await other.close();
    }
    expect(fake.mode).toBe('today');
  });
});

describe('today: WEB-family /player', () => {
  it.each([
    'WEB',
    'MWEB',
    'WEB_EMBEDDED_PLAYER',
    'WEB_REMIX',
    'WEB_CREATOR',
    'TVHTML5_SIMPLY_EMBEDDED_PLAYER',
  ])('%s without signatureTimestamp answers without captions, everything else intact', async (client) => {
    const { status, json } = await player(videoIds.manualAndAuto, client);
    expect(status).toBe(200);
    expect(json).not.toHaveProperty('captions');
    expect(json.playabilityStatus.status).toBe('OK');
    expect(json.videoDetails.videoId).toBe(videoIds.manualAndAuto);
  });

  it('with signatureTimestamp every caption URL carries exactly one exp=xpe', async () => {
    for (const id of [videoIds.manualAndAuto, videoIds.poTokenOnWeb, videoIds.audioTracks]) {
      const { json } = await player(id, 'WEB', { sts: true });
      const urls = tracks(json).map((t) => new URL(t.baseUrl as string));
      expect(urls.length).toBeGreaterThan(0);
      for (const u of urls) expect(u.searchParams.getAll('exp')).toEqual(['xpe']);
    }
  });

  it('a gated WEB URL answers an empty 200 after the configured delay; with pot it answers the body', async () => {
    fake.setGatedCaptionDelay(300);
    const { json } = await player(videoIds.manualAndAuto, 'WEB', { sts: true });
    const url = local(tracks(json)[0]?.baseUrl as string);
    const gated = await get(url, { 'user-agent': 'Mozilla/5.0 test', referer: 'https://www.youtube.com/' });
    expect(gated).toMatchObject({ status: 200, body: '' });
    expect(gated.type).toMatch(/^text\/html/);
    expect(gated.ms).toBeGreaterThanOrEqual(280);
    const withPot = await get(`${url}&pot=TOKEN&potc=1&c=WEB&fmt=json3`);
    expect(withPot.status).toBe(200);
    expect(JSON.parse(withPot.body).events.length).toBeGreaterThan(0);
    const rec = fake.requests.filter((r) => r.endpoint === 'timedtext')[0];
    expect(rec?.headers['user-agent']).toBe('Mozilla/5.0 test');
    expect(rec?.headers.referer).toBe('https://www.youtube.com/');
  });

  it('field-masked WEB requests keep working (microformat from the WEB recording or the masked one)', async () => {
    const full = await player(videoIds.manualAndAuto, 'WEB', { query: '?$fields=microformat,videoDetails' });
    expect(Object.keys(full.json).sort()).toEqual(['microformat', 'videoDetails']);
    expect(full.json.microformat.playerMicroformatRenderer.uploadDate).toBeTruthy();
    const masked = await player(videoIds.unlistedShort, 'WEB', {
      query: '?$fields=microformat,videoDetails',
    });
    expect(masked.json.microformat.playerMicroformatRenderer.isUnlisted).toBe(true);
    expect(masked.json).not.toHaveProperty('captions');
  });
});

/** Every routed video with caption tracks in ANY of its recordings. */
function captionedVideos(): string[] {
  const routes = defaultRoutes();
  const load = (ref: FixtureRef): Json => JSON.parse(loadFixture(ref).body) as Json;
  return Object.entries(routes.videos)
    .filter(([, v]) =>
      [...Object.values(v.player), ...Object.values(v.todayPlayer ?? {})].some(
        (r) => tracks(load(r)).length > 0,
      ),
    )
    .map(([id]) => id);
}

/** The deliberate client-specific refusals (README): those clients are checked separately. */
const REFUSALS: Record<string, string[]> = {
  [videoIds.autoOnly]: ['VISIONOS'],
  [videoIds.madeForKids]: ['VISIONOS'],
};

describe('today: mobile clients', () => {
  it('reach every captioned fixture video with its tracks, clean URLs and no microformat', async () => {
    const ids = captionedVideos();
    expect(ids).toEqual(
      expect.arrayContaining([
        videoIds.manualAndAuto,
        videoIds.germanNamedTrack,
        videoIds.poTokenOnWeb,
        videoIds.autoOnly,
        videoIds.madeForKids,
      ]),
    );
    for (const id of ids) {
      for (const client of ['VISIONOS', 'ANDROID', 'IOS']) {
        if (REFUSALS[id]?.includes(client)) continue;
        const { json } = await player(id, client);
        const what = `${id} via ${client}`;
        expect(json.playabilityStatus?.status, what).toBe('OK');
        expect(json.videoDetails?.videoId, what).toBe(id);
        expect(tracks(json).length, what).toBeGreaterThan(0);
        for (const t of tracks(json)) {
          const u = new URL(t.baseUrl as string, 'https://www.youtube.com');
          expect(u.searchParams.has('exp'), what).toBe(false);
          expect(u.searchParams.get('v'), what).toBe(id);
        }
        expect(json, what).not.toHaveProperty('microformat');
      }
    }
  });

  it('clean mobile URLs answer their body at once', async () => {
    fake.setGatedCaptionDelay(5000);
    const { json } = await player(videoIds.germanNamedTrack, 'ANDROID');
    const res = await get(local(tracks(json)[0]?.baseUrl as string, { fmt: 'json3' }));
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).events[0].segs[0].utf8).toContain(videoIds.germanNamedTrack);
  });

  it('it3OtbTxQk0: VISIONOS answers the recorded UNPLAYABLE, ANDROID serves it (replay: VISIONOS serves it)', async () => {
    const vision = await player(videoIds.autoOnly, 'VISIONOS');
    expect(vision.json.playabilityStatus).toEqual({
      status: 'UNPLAYABLE',
      reason: 'This video is not available',
    });
    expect((await player(videoIds.autoOnly, 'ANDROID')).json.playabilityStatus.status).toBe('OK');
    fake.setMode('replay');
    expect((await player(videoIds.autoOnly, 'VISIONOS')).json.playabilityStatus.status).toBe('OK');
  });

  it('made for kids: VISIONOS says ERROR, ANDROID and IOS serve a copy rewritten to the new id', async () => {
    const vision = await player(videoIds.madeForKids, 'VISIONOS');
    expect(vision.json.playabilityStatus).toMatchObject({
      status: 'ERROR',
      reason: 'This video is unavailable',
    });
    for (const client of ['ANDROID', 'IOS']) {
      const { json } = await player(videoIds.madeForKids, client);
      expect(json._synthetic).toMatch(/SYNTHETIC/);
      expect(json.videoDetails.videoId).toBe(videoIds.madeForKids);
      expect(tracks(json).map((t) => new URL(t.baseUrl as string).searchParams.get('v'))).toEqual([
        videoIds.madeForKids,
        videoIds.madeForKids,
      ]);
    }
    const { json } = await player(videoIds.madeForKids, 'IOS');
    const body = await get(local(tracks(json)[0]?.baseUrl as string, { fmt: 'json3' }));
    expect(JSON.parse(body.body).events.length).toBeGreaterThan(0);
  });
});

describe('latency', () => {
  it('applies to every answer, with per-endpoint overrides', async () => {
    fake.setLatency(250);
    expect((await player(videoIds.manualAndAuto, 'ANDROID')).ms).toBeGreaterThanOrEqual(230);
    fake.setLatency(0);
    fake.setLatency(900, 'timedtext');
    const { json, ms } = await player(videoIds.manualAndAuto, 'ANDROID');
    expect(ms).toBeLessThan(900);
    const caption = await get(local(tracks(json)[0]?.baseUrl as string));
    expect(caption.ms).toBeGreaterThanOrEqual(880);
    fake.setLatency(0, 'timedtext');
  });
});

describe('fault injection (both modes)', () => {
  it('matches by client, video and query', async () => {
    fake.failNext({ kind: 'pageReload' }, { client: 'VISIONOS', videoId: videoIds.audioTracks });
    expect((await player(videoIds.audioTracks, 'ANDROID')).json.playabilityStatus.status).toBe('OK');
    expect((await player(videoIds.manualAndAuto, 'VISIONOS')).json.playabilityStatus.status).toBe('OK');
    const reload = await player(videoIds.audioTracks, 'VISIONOS');
    expect(reload.json.playabilityStatus).toMatchObject({
      status: 'ERROR',
      reason: 'The page needs to be reloaded.',
    });
    expect((await player(videoIds.audioTracks, 'VISIONOS')).json.playabilityStatus.status).toBe('OK');

    fake.failNext(
      { kind: 'status', status: 429 },
      { endpoint: 'timedtext', query: { tlang: 'de' }, times: 2 },
    );
    const { json } = await player(videoIds.manualAndAuto, 'ANDROID');
    const url = local(tracks(json)[0]?.baseUrl as string);
    expect((await get(`${url}&tlang=fr`)).status).toBe(200);
    expect((await get(`${url}&tlang=de&fmt=json3`)).status).toBe(429);
    expect((await get(`${url}&tlang=de&fmt=srv3`)).status).toBe(429);
    expect((await get(`${url}&tlang=de&fmt=json3`)).status).toBe(200);
  });

  it('playability kinds answer /player only, in the errorScreen shape', async () => {
    fake.setMode('replay');
    fake.failNext({ kind: 'loginRequired' });
    fake.failNext({ kind: 'tryAgainLater' });
    fake.failNext({ kind: 'playability', status: 'UNPLAYABLE', reason: 'Nope', subreason: 'because' });
    // a /next request does not consume them
    expect((await post('next', { context: context('WEB'), videoId: videoIds.manualAndAuto })).status).toBe(
      200,
    );
    const login = (await player(videoIds.manualAndAuto, 'ANDROID')).json.playabilityStatus;
    expect(login).toMatchObject({ status: 'LOGIN_REQUIRED', reason: 'Sign in to continue' });
    const later = (await player(videoIds.manualAndAuto, 'ANDROID')).json.playabilityStatus;
    expect(later).toMatchObject({ status: 'UNPLAYABLE', reason: 'Video unavailable' });
    expect(later.errorScreen.playerErrorMessageRenderer.subreason.runs[0].text).toMatch(/try again later/);
    const custom = (await player(videoIds.manualAndAuto, 'ANDROID')).json.playabilityStatus;
    expect(custom).toMatchObject({ status: 'UNPLAYABLE', reason: 'Nope' });
    expect(custom.errorScreen.playerErrorMessageRenderer.subreason.runs[0].text).toBe('because');
  });

  it('emptyCommentsPage empties one continuation page and keeps its shape', async () => {
    const token = `synth-${videoIds.syntheticComments}-top-1`;
    fake.failNext({ kind: 'emptyCommentsPage' });
    await post('next', { context: context('WEB'), videoId: videoIds.syntheticComments }); // not consumed
    const empty = (await post('next', { context: context('WEB'), continuation: token })).json;
    const slots = empty.onResponseReceivedEndpoints.map((e: Json) => e.reloadContinuationItemsCommand);
    expect(slots[0].continuationItems[0].commentsHeaderRenderer).toBeDefined();
    expect(slots[1].continuationItems).toEqual([]);
    expect(empty.frameworkUpdates.entityBatchUpdate.mutations).toEqual([]);
    const again = (await post('next', { context: context('WEB'), continuation: token })).json;
    expect(
      again.onResponseReceivedEndpoints[1].reloadContinuationItemsCommand.continuationItems.length,
    ).toBeGreaterThan(0);
  });

  it('emptyPlaylistPage keeps the header and its video count but no items and no continuation', async () => {
    fake.failNext({ kind: 'emptyPlaylistPage' });
    const { json } = await post('browse', {
      context: context('WEB'),
      browseId: `VL${playlistIds.synthetic}`,
    });
    expect(JSON.stringify(json.header)).toContain('250 videos');
    const section =
      json.contents.twoColumnBrowseResultsRenderer.tabs[0].tabRenderer.content.sectionListRenderer
        .contents[0];
    expect(section.itemSectionRenderer.contents).toEqual([]);
    expect(JSON.stringify(json)).not.toMatch(/continuationItem|lockupViewModel/);
  });
});

describe('sessions', () => {
  it('hands out a fresh visitorData per visitor_id call and per sw.js_data read', async () => {
    const a = (await post('visitor_id', { context: context('WEB') })).json;
    const b = (await post('visitor_id', { context: context('WEB') })).json;
    expect(a.responseContext.visitorData).toMatch(/^[A-Za-z0-9%_-]+$/);
    expect(a.responseContext.visitorData).not.toBe(b.responseContext.visitorData);
    const sw = await get('/sw.js_data');
    expect(sw.body.startsWith(")]}'")).toBe(true);
    // exactly how YouTube.js reads it
    const data = JSON.parse(sw.body.replace(/^\)\]\}'/, '')) as unknown[][];
    const [[deviceInfo], apiKey] = data[0]?.[2] as [[unknown[]], string];
    expect(typeof apiKey).toBe('string');
    expect(deviceInfo[16]).toBe('2.20261115.01.00');
    expect(deviceInfo[13]).toBe(fake.visitorDataIssued[2]);
    expect(fake.visitorDataIssued).toHaveLength(3);
    expect(new Set(fake.visitorDataIssued).size).toBe(3);
    expect(fake.count('visitor_id')).toBe(2);
    expect(fake.count('sw_js_data')).toBe(1);
  });

  it('records visitorData from the header, else from the context', async () => {
    await player(videoIds.manualAndAuto, 'ANDROID', { headers: { 'x-goog-visitor-id': 'VISITOR_H' } });
    await player(videoIds.manualAndAuto, 'ANDROID', { client: { visitorData: 'VISITOR_C' } });
    expect(fake.requests.map((r) => r.visitorData)).toEqual(['VISITOR_H', 'VISITOR_C']);
  });

  it('sessionQuota bot-checks a visitor after N /player calls; a fresh visitor passes', async () => {
    const limited = await startFakeYouTube({ mode: 'today', sessionQuota: 2 });
    try {
      const call = async (visitor: string) =>
        (
          (await (
            await fetch(`${limited.url}/youtubei/v1/player`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-goog-visitor-id': visitor },
              body: JSON.stringify({ context: context('ANDROID'), videoId: videoIds.manualAndAuto }),
            })
          ).json()) as Json
        ).playabilityStatus;
      expect((await call('A')).status).toBe('OK');
      expect((await call('A')).status).toBe('OK');
      expect(await call('A')).toMatchObject({
        status: 'LOGIN_REQUIRED',
        reason: 'Sign in to confirm you’re not a bot',
      });
      expect((await call('B')).status).toBe('OK');
    } finally {
      await limited.close();
    }
  });
});

describe('version rot', () => {
  it('an old WEB-family version gets 400 FAILED_PRECONDITION until it reads the live one from /sw.js_data', async () => {
    fake.setMinWebClientVersion('2.20261101.00.00');
    const old = { clientVersion: '2.20250722.00.00' };
    for (const endpoint of ['player', 'next', 'browse']) {
      const res = await post(endpoint, {
        context: context('WEB', old),
        videoId: videoIds.manualAndAuto,
        browseId: `VL${playlistIds.small}`,
      });
      expect(res.status, endpoint).toBe(400);
      expect(res.json).toEqual({
        error: { code: 400, message: 'Precondition check failed.', status: 'FAILED_PRECONDITION' },
      });
    }
    // mobile clients have their own versions
    expect((await player(videoIds.manualAndAuto, 'ANDROID')).status).toBe(200);
    const live = JSON.parse((await get('/sw.js_data')).body.slice(4))[0][2][0][0][16] as string;
    const retry = await player(videoIds.manualAndAuto, 'WEB', { client: { clientVersion: live } });
    expect(retry.status).toBe(200);
  });
});

const items = (json: Json): Json[] =>
  json.contents.twoColumnBrowseResultsRenderer.tabs[0].tabRenderer.content.sectionListRenderer.contents[0]
    .itemSectionRenderer.contents;

/** Video ids of a recorded classic first page, in order. */
function recordedIds(file: string): string[] {
  const page = JSON.parse(loadFixture({ file }).body) as Json;
  return (items(page)[0]?.playlistVideoListRenderer.contents as Json[])
    .filter((i) => i.playlistVideoRenderer)
    .map((i) => i.playlistVideoRenderer.videoId as string);
}

describe('today: playlists', () => {
  it('builds the recorded NewPipe playlist token byte for byte and decodes it', () => {
    expect(buildPlaylistContinuation(playlistIds.classic)).toBe(RECORDED_PLAYLIST_TOKEN);
    expect(parsePlaylistContinuation(RECORDED_PLAYLIST_TOKEN)).toEqual({
      playlistId: playlistIds.classic,
      start: 0,
    });
    expect(parsePlaylistContinuation(buildPlaylistContinuation('PLx', 200))).toEqual({
      playlistId: 'PLx',
      start: 200,
    });
    expect(parsePlaylistContinuation(RECORDED_COMMENTS_TOKEN)).toBeUndefined();
    expect(parsePlaylistContinuation('not a token!')).toBeUndefined();
  });

  it('header-only first answer, then the built continuation answers the 49 videos in order', async () => {
    const first = (await post('browse', { context: context('WEB'), browseId: `VL${playlistIds.classic}` }))
      .json;
    expect(first.header).toBeDefined();
    expect(first.microformat).toBeDefined();
    expect(first).not.toHaveProperty('contents');
    expect(JSON.stringify(first)).not.toMatch(/continuationItem|playlistVideoRenderer/);
    const page = (
      await post('browse', {
        context: context('WEB'),
        continuation: buildPlaylistContinuation(playlistIds.classic),
      })
    ).json;
    const got = page.onResponseReceivedActions[0].reloadContinuationItemsCommand.continuationItems
      .filter((i: Json) => i.playlistVideoRenderer)
      .map((i: Json) => i.playlistVideoRenderer.videoId);
    expect(got).toEqual(recordedIds('newpipe/62b3c3b/playlist/learning/generated_mock_2.json'));
  });

  it('a playlist made header-only decodes its built token (no lookup) into the items page', async () => {
    fake.setPlaylistShape(playlistIds.small, 'headerOnly');
    try {
      const token = buildPlaylistContinuation(playlistIds.small);
      expect(Object.keys(fake.routes.continuations)).not.toContain(token);
      const page = (await post('browse', { context: context('WEB'), continuation: token })).json;
      const cmd = page.onResponseReceivedActions[0].reloadContinuationItemsCommand;
      expect(cmd.targetId).toBe(playlistIds.small);
      expect(cmd.continuationItems.map((i: Json) => i.playlistVideoRenderer.videoId)).toEqual(
        recordedIds('newpipe/62b3c3b/playlist/continuations/generated_mock_4.json'),
      );
      const later = (
        await post('browse', {
          context: context('WEB'),
          continuation: buildPlaylistContinuation(playlistIds.small, 10),
        })
      ).json;
      expect(
        later.onResponseReceivedActions[0].reloadContinuationItemsCommand.continuationItems,
      ).toHaveLength(7);
    } finally {
      fake.setPlaylistShape(playlistIds.small, 'flat');
    }
  });

  it('flat first page: lockupViewModel items straight in itemSectionRenderer, in playlist order', async () => {
    const { json } = await post('browse', { context: context('WEB'), browseId: `VL${playlistIds.small}` });
    const list = items(json);
    expect(JSON.stringify(json)).not.toContain('playlistVideoListRenderer');
    expect(list.map((i) => i.lockupViewModel.contentId)).toEqual(
      recordedIds('newpipe/62b3c3b/playlist/continuations/generated_mock_4.json'),
    );
    const meta = list[0]?.lockupViewModel.metadata.lockupMetadataViewModel;
    expect(meta.title.content).toBeTruthy();
    expect(meta.metadata.contentMetadataViewModel.metadataRows[0].metadataParts[0].text.content).toBe(
      'Audio Lounge Music',
    );
    expect(JSON.stringify(json.header)).toMatch(/17 videos/);
  });

  it('the synthetic 250 is flat with continuationItemViewModel, then pages in the old shape', async () => {
    const first = (await post('browse', { context: context('WEB'), browseId: `VL${playlistIds.synthetic}` }))
      .json;
    const list = items(first);
    const ids = list.filter((i) => i.lockupViewModel).map((i) => i.lockupViewModel.contentId as string);
    let token: string | undefined =
      list.at(-1)?.continuationItemViewModel.continuationCommand.innertubeCommand.continuationCommand.token;
    while (token) {
      const page = (await post('browse', { context: context('WEB'), continuation: token })).json;
      const more = page.onResponseReceivedActions[0].appendContinuationItemsAction
        .continuationItems as Json[];
      ids.push(...more.filter((i) => i.lockupViewModel).map((i) => i.lockupViewModel.contentId as string));
      token = more.at(-1)?.continuationItemRenderer?.continuationEndpoint.continuationCommand.token;
    }
    expect(ids).toEqual(Array.from({ length: 250 }, (_, i) => `synthv${String(i + 1).padStart(5, '0')}`));
  });

  it('Shorts stay as recorded; replay keeps the classic first pages', async () => {
    const today = await post('browse', { context: context('WEB'), browseId: `VL${playlistIds.shorts}` });
    fake.setMode('replay');
    const replay = await post('browse', { context: context('WEB'), browseId: `VL${playlistIds.shorts}` });
    // the same page, but today names a fresh visitor for a caller that sent none, as the platform does
    const { responseContext: todayContext, ...todayRest } = today.json as {
      responseContext: { visitorData?: string };
    };
    const { responseContext: replayContext, ...replayRest } = replay.json as {
      responseContext: { visitorData?: string };
    };
    expect(todayRest).toEqual(replayRest);
    expect(todayContext.visitorData).not.toBe(replayContext.visitorData);
    expect(fake.visitorDataIssued).toContain(todayContext.visitorData);
    const classic = await fetch(`${fake.url}/youtubei/v1/browse`, {
      method: 'POST',
      body: JSON.stringify({ context: context('WEB'), browseId: `VL${playlistIds.classic}` }),
    });
    expect(await classic.text()).toBe(
      loadFixture({ file: 'newpipe/62b3c3b/playlist/learning/generated_mock_2.json' }).body,
    );
  });
});

describe('comments without a panel', () => {
  it('builds the recorded NewPipe comments token byte for byte; parsing reads the id', () => {
    expect(buildCommentsContinuation(videoIds.comments)).toBe(RECORDED_COMMENTS_TOKEN);
    expect(parseCommentsContinuation(RECORDED_COMMENTS_TOKEN)).toBe(videoIds.comments);
    expect(parseCommentsContinuation(buildCommentsContinuation(videoIds.commentsNoPanel))).toBe(
      videoIds.commentsNoPanel,
    );
    expect(parseCommentsContinuation(RECORDED_PLAYLIST_TOKEN)).toBeUndefined();
  });

  it('watch-next has no comments entry, yet the locally built continuation answers the comments', async () => {
    const next = (await post('next', { context: context('WEB'), videoId: videoIds.commentsNoPanel })).json;
    const text = JSON.stringify(next);
    expect(text).not.toMatch(
      /comment-item-section|engagement-panel-comments-section|turned off|continuationItem/,
    );
    const first = (
      await post('next', {
        context: context('WEB'),
        continuation: buildCommentsContinuation(videoIds.commentsNoPanel),
      })
    ).json;
    const body = first.onResponseReceivedEndpoints[1].reloadContinuationItemsCommand
      .continuationItems as Json[];
    expect(body.filter((i) => i.commentThreadRenderer)).toHaveLength(20);
    const token = body.at(-1)?.continuationItemRenderer.continuationEndpoint.continuationCommand
      .token as string;
    const second = (await post('next', { context: context('WEB'), continuation: token })).json;
    const more = second.onResponseReceivedEndpoints[0].appendContinuationItemsAction
      .continuationItems as Json[];
    expect(more.filter((i) => i.commentThreadRenderer)).toHaveLength(5);
  });

  it('an unknown built token is still INVALID_ARGUMENT', async () => {
    const res = await post('next', {
      context: context('WEB'),
      continuation: buildCommentsContinuation('zzzzzzzzzzz'),
    });
    expect(res.status).toBe(400);
  });
});

describe('replay mode is unchanged', () => {
  beforeEach(() => {
    fake.setMode('replay');
  });

  it('answers the recorded bodies byte for byte', async () => {
    const raw = async (endpoint: string, body: Json) =>
      (
        await fetch(`${fake.url}/youtubei/v1/${endpoint}`, { method: 'POST', body: JSON.stringify(body) })
      ).text();
    expect(await raw('player', { context: context('WEB'), videoId: videoIds.manualAndAuto })).toBe(
      loadFixture({
        file: 'youtube-transcript-api/7a1c61b/youtube_ww1_nl_en.html.static',
        pick: 'ytInitialPlayerResponse',
      }).body,
    );
    expect(await raw('player', { context: context('VISIONOS'), videoId: videoIds.poTokenOnWeb })).toBe(
      loadFixture({ file: 'youtube-transcript-api/85c8594/youtube_po_token_required.innertube.json.static' })
        .body,
    );
    const different = JSON.parse(
      await raw('player', { context: context('ANDROID'), videoId: videoIds.germanNamedTrack }),
    );
    expect(different.videoDetails.videoId).toBe('aQvGIIdgFDM');
  });

  it('a gated URL answers empty at once, whatever the delay', async () => {
    fake.setGatedCaptionDelay(5000);
    const res = await get(`/api/timedtext?v=${videoIds.manualAndAuto}&lang=en&exp=xpe`);
    expect(res).toMatchObject({ status: 200, body: '' });
    expect(res.ms).toBeLessThan(4000);
  });
});

describe('watch page (for other extractors run against the fake)', () => {
  it('carries the ytcfg values youtube-transcript-api reads and is labelled synthetic', async () => {
    const res = await fetch(`${fake.url}/watch?v=${videoIds.manualAndAuto}`);
    const html = await res.text();
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(html).toMatch(/"INNERTUBE_API_KEY":\s*"[a-zA-Z0-9_-]+"/);
    expect(html).toContain('SYNTHETIC');
    expect(fake.requests.at(-1)?.endpoint).toBe('watch');
  });
});

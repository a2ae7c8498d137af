// The fake's latency, injected faults, visitor sessions and client version rot.
import { describe, expect, it } from 'vitest';
import { playlistIds, startFakeYouTube, videoIds } from '@subx/testing/fake-youtube';
import {
  type Json,
  context,
  fake,
  get,
  local,
  player,
  post,
  tracks,
  useFakeYouTube,
} from './fake-youtube-support.ts';

useFakeYouTube();

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

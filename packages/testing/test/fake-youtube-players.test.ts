// The fake in today mode: WEB-family and mobile /player answers and their caption URLs.
import { describe, expect, it } from 'vitest';
import {
  defaultRoutes,
  loadFixture,
  startFakeYouTube,
  videoIds,
  type FixtureRef,
} from '@subx/testing/fake-youtube';
import { type Json, fake, get, local, player, tracks, useFakeYouTube } from './fake-youtube-support.ts';

useFakeYouTube();

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

describe('today: the TV client (TVHTML5, yt-dlp tv_samsung)', () => {
  it('answers un-gated caption URLs signed for TVHTML5 and no microformat, with or without sts', async () => {
    for (const sts of [false, true]) {
      const { status, json } = await player(videoIds.manualAndAuto, 'TVHTML5', { sts });
      expect(status).toBe(200);
      expect(json).not.toHaveProperty('microformat');
      const urls = tracks(json).map((t) => new URL(t.baseUrl as string, 'https://www.youtube.com'));
      expect(urls.length).toBeGreaterThan(0);
      for (const u of urls) {
        expect(u.searchParams.get('exp')).toBeNull();
        expect(u.searchParams.get('c')).toBe('TVHTML5');
      }
    }
  });

  it('its caption URLs answer an empty 200 by default (September 2026), the body once set to answer', async () => {
    const { json } = await player(videoIds.manualAndAuto, 'TVHTML5');
    const url = local(tracks(json)[0]?.baseUrl as string);
    expect(await get(url)).toMatchObject({ status: 200, body: '' });
    fake.setTvCaptions('answer');
    const answered = await get(url);
    expect(answered.status).toBe(200);
    expect(answered.body.length).toBeGreaterThan(0);
    // reset() goes back to the start option
    fake.reset();
    expect(await get(url)).toMatchObject({ status: 200, body: '' });
  });
});

describe('a stream that has ended and is still being processed', () => {
  it.each(['VISIONOS', 'ANDROID', 'IOS'])(
    '%s: playable, isPostLiveDvr, no caption track yet',
    async (client) => {
      const { status, json } = await player(videoIds.postLive, client);
      expect(status).toBe(200);
      expect(json.playabilityStatus.status).toBe('OK');
      expect(json.videoDetails).toMatchObject({
        videoId: videoIds.postLive,
        isPostLiveDvr: true,
        isLiveContent: true,
      });
      expect(json.captions).toBeUndefined();
    },
  );
});

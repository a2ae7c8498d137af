// The fake in replay mode, and the synthetic watch page other extractors read.
import { beforeEach, describe, expect, it } from 'vitest';
import { loadFixture, videoIds } from '@subx/testing/fake-youtube';
import { type Json, context, fake, get, useFakeYouTube } from './fake-youtube-helpers.ts';

useFakeYouTube();

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

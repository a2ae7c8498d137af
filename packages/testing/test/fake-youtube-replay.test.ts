// The fake in replay mode, and the synthetic watch page other extractors read.
import { beforeEach, describe, expect, it } from 'vitest';
import { extractHtmlVar, loadFixture, mediaOnOrigin, videoIds } from '@subx/testing/fake-youtube';
import { type Json, context, fake, get, useFakeYouTube } from './fake-youtube-support.ts';

useFakeYouTube();

describe('replay mode is unchanged', () => {
  beforeEach(() => {
    fake.setMode('replay');
  });

  it('answers the recorded bodies byte for byte, recorded media hosts pointed at the fake', async () => {
    const raw = async (endpoint: string, body: Json) =>
      (
        await fetch(`${fake.url}/youtubei/v1/${endpoint}`, { method: 'POST', body: JSON.stringify(body) })
      ).text();
    expect(await raw('player', { context: context('WEB'), videoId: videoIds.manualAndAuto })).toBe(
      mediaOnOrigin(
        loadFixture({
          file: 'youtube-transcript-api/7a1c61b/youtube_ww1_nl_en.html.static',
          pick: 'ytInitialPlayerResponse',
        }).body,
        fake.url,
      ),
    );
    expect(await raw('player', { context: context('VISIONOS'), videoId: videoIds.poTokenOnWeb })).toBe(
      mediaOnOrigin(
        loadFixture({
          file: 'youtube-transcript-api/85c8594/youtube_po_token_required.innertube.json.static',
        }).body,
        fake.url,
      ),
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

describe('ytInitialData in both of the platform’s shapes', () => {
  const next = () => JSON.parse(loadFixture({ file: nextFile, pick: 'ytInitialData' }).body) as unknown;
  const nextFile = 'youtube-transcript-api/7a1c61b/youtube_ww1_nl_en.html.static';

  it('reads the assignment `var ytInitialData = …;`', () => {
    const html = `<html><script>var ytInitialData = {"a":{"b":"}{"}};</script></html>`;
    expect(extractHtmlVar(html, 'ytInitialData')).toEqual({ a: { b: '}{' } });
  });

  it('reads the JSON script element `<script id="yt-initial-data" type="application/json">`', () => {
    const html = `<html><script id="yt-initial-data" type="application/json">{"a":{"b":"}{"}}</script></html>`;
    expect(extractHtmlVar(html, 'ytInitialData')).toEqual({ a: { b: '}{' } });
    expect(() => extractHtmlVar('<html></html>', 'ytInitialData')).toThrow(/not found/);
  });

  it('the watch page carries the watch-next answer in both shapes, one page in five the JSON element', async () => {
    const pages: string[] = [];
    for (let i = 0; i < 5; i++)
      pages.push(await (await fetch(`${fake.url}/watch?v=${videoIds.manualAndAuto}`)).text());
    const asScript = pages.filter((p) => p.includes('<script id="yt-initial-data" type="application/json">'));
    expect(asScript).toHaveLength(1);
    expect(pages.filter((p) => p.includes('var ytInitialData = '))).toHaveLength(4);
    for (const page of pages) expect(extractHtmlVar(page, 'ytInitialData')).toEqual(next());
  });
});

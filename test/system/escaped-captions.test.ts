/**
 * Caption text the platform sent escaped (`&lt;3`, `a &lt; b`) is content: from a synthetic caption
 * body through the real YouTube client, the extractor over gRPC and the gateway, it reaches json,
 * plain-text `text`, txt, srt, md, vtt (escaped as WebVTT requires) and batch `content` alike, while
 * real markup (`<font>`, `<i>`, `<c.colorE5E5E5>`, srv3 `<s>`) is stripped. Both caption wire
 * formats the client reads (json3, srv3) are checked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInProcessEventBus } from '@subx/ports';
import { defaultRoutes, startFakeYouTube, videoIds } from '@subx/testing/fake-youtube';
import type { FakeYouTube } from '@subx/testing/fake-youtube';
import { startInProcessSystem } from './support.ts';
import type { InProcessSystem } from './support.ts';

const VIDEO = videoIds.manualAndAuto;
const URL_ = `https://www.youtube.com/watch?v=${VIDEO}`;
/** What a viewer read, cue by cue. */
const CUES = ['I <3 you', 'if a < b and b > c', 'x <y and y> z & more', 'really loud music'];

describe.each(['json3', 'srv3'] as const)('escaped caption text survives every format (%s)', (fmt) => {
  const bus = createInProcessEventBus();
  let yt: FakeYouTube;
  let system: InProcessSystem;

  beforeAll(async () => {
    const template = defaultRoutes().videos[VIDEO]!;
    yt = await startFakeYouTube({
      routes: {
        videos: {
          [VIDEO]: {
            ...template,
            captions: {
              en: { json3: 'captions/escaped-text-en.json3', srv3: 'captions/escaped-text-en.srv3.xml' },
            },
            note: 'escaped caption text next to real markup',
          },
        },
      },
    });
    yt.setCaptionFormat(fmt);
    system = await startInProcessSystem({ youtubeUrl: yt.url, bus });
  });
  afterAll(async () => {
    await system?.stop();
    await bus.close();
    await yt?.close();
  });

  const post = (path: string, payload: Record<string, unknown>) =>
    system.gateway.app.inject({
      method: 'POST',
      url: path,
      headers: { 'x-api-key': system.apiKey, 'content-type': 'application/json' },
      payload,
    });

  it('json segments and plain-text `text`', async () => {
    const timed = await post('/api/v1/extract', { url: URL_ });
    expect(timed.statusCode, timed.body).toBe(200);
    expect(timed.json<{ subtitles: { text: string }[] }>().subtitles.map((s) => s.text)).toEqual(CUES);
    const plain = await post('/api/v1/extract', { url: URL_, include_timestamps: false });
    expect(plain.json<{ text: string }>().text).toBe(CUES.join(' '));
  });

  it('txt, srt and md carry the text as it was said; vtt escapes it as WebVTT requires', async () => {
    const doc = async (format: string) => (await post('/api/v1/extract', { url: URL_, format })).body;
    expect(await doc('txt')).toBe(`${CUES.join('\n')}\n`);
    const srt = await doc('srt');
    for (const cue of CUES) expect(srt).toContain(`\n${cue}\n`);
    const md = await doc('md');
    for (const cue of CUES) expect(md).toContain(`] ${cue}\n`);
    const vtt = await doc('vtt');
    expect(vtt).toContain('\nI &lt;3 you\n');
    expect(vtt).toContain('\nif a &lt; b and b &gt; c\n');
    expect(vtt).toContain('\nx &lt;y and y&gt; z &amp; more\n');
    expect(vtt).toContain('\nreally loud music\n');
  });

  it('batch `content` is the same document', async () => {
    const res = await post('/api/v1/batch', { urls: [URL_], format: 'txt' });
    expect(res.statusCode, res.body).toBe(200);
    const item = res.json<{ results: { success: boolean; content?: string }[] }>().results[0]!;
    expect(item.success).toBe(true);
    expect(item.content).toBe(`${CUES.join('\n')}\n`);
  });
});

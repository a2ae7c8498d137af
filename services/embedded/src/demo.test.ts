/**
 * The videos `npm run demo` offers, extracted from its replay as the extractor extracts them (the
 * YouTube client's getTranscript, whose metadata the extract response carries): each one that has
 * subtitles comes back with its upload date, whatever includes were asked for.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { YouTubeClient, loadYouTubeConfig } from '@subx/youtube';
import { DEMO_VIDEOS, startDemoPlatform, type DemoPlatform } from './demo.ts';

let platform: DemoPlatform;
let client: YouTubeClient;
beforeAll(async () => {
  const env: NodeJS.ProcessEnv = {};
  platform = await startDemoPlatform(env);
  client = YouTubeClient.create(loadYouTubeConfig({ YOUTUBE_BASE_URL: env.YOUTUBE_BASE_URL! }));
});
afterAll(async () => {
  await client?.close();
  await platform?.close();
});

/** English first, else the first language the video has (as a caller would retry). */
async function extract(videoId: string) {
  try {
    return await client.getTranscript({ videoId, language: 'en' });
  } catch (err) {
    const available = (err as { details?: { available_languages?: string[] } }).details?.available_languages;
    if (!available?.[0]) throw err;
    return client.getTranscript({ videoId, language: available[0] });
  }
}

describe('every demo video', () => {
  it('that has subtitles extracts with an upload date (no likes or chapters asked for)', async () => {
    const dated: string[] = [];
    for (const { id } of DEMO_VIDEOS) {
      const result = await extract(id).then(
        (transcript) => ({ transcript }),
        (err: { code?: string }) => ({ code: err.code }),
      );
      if (!('transcript' in result)) {
        // the ones the banner announces as errors
        expect(['NO_SUBTITLES', 'VIDEO_UNAVAILABLE'], `${id}: ${String(result.code)}`).toContain(result.code);
        continue;
      }
      expect(result.transcript.metadata.uploadDate, id).toMatch(
        /^(19|20)\d{2}(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])$/,
      );
      dated.push(id);
    }
    // manual + auto en, auto en only, auto fr only, manual en/en-GB + auto ja
    expect(dated).toEqual(['F1xioXWb8CY', 'it3OtbTxQk0', 'cJ9to6EmElQ', 'Kn56bMZ9OE8']);
  }, 60_000);

  it('reads Kn56bMZ9OE8 and cJ9to6EmElQ as their recordings date them', async () => {
    expect((await extract('Kn56bMZ9OE8')).metadata.uploadDate).toBe('20230320');
    expect((await extract('cJ9to6EmElQ')).metadata.uploadDate).toBe('20230707');
  });
});

// The fake's captionless video with spoken audio: audio-only formats, ranged downloads only.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  MAX_PIECE_BYTES,
  mediaOnOrigin,
  SPEECH_LENGTH_SECONDS,
  startFakeYouTube,
  videoIds,
} from '@subx/testing/fake-youtube';
import { type Json, fake, get, player, tracks, useFakeYouTube } from './fake-youtube-support.ts';

useFakeYouTube();

const audio = (file: string) => readFileSync(new URL(`../audio/${file}`, import.meta.url));

describe('captionless video with spoken audio', () => {
  it('VISIONOS gets plain audio-only URLs for itags 251 and 140, no captions, 70 s', async () => {
    const { status, json } = await player(videoIds.speechNoCaptions, 'VISIONOS');
    expect(status).toBe(200);
    expect(json.playabilityStatus.status).toBe('OK');
    expect(tracks(json)).toEqual([]);
    expect(json.videoDetails.videoId).toBe('synthSpeech');
    expect(json.videoDetails.lengthSeconds).toBe(String(SPEECH_LENGTH_SECONDS));
    const formats = json.streamingData.adaptiveFormats as Json[];
    expect(formats.map((f) => f.itag)).toEqual([251, 140]);
    for (const f of formats) {
      expect(f.mimeType).toMatch(/^audio\//);
      expect(f.url).toMatch(new RegExp(`^${fake.url}/videoplayback\\?`));
      expect(Number(f.contentLength)).toBe(audio(f.itag === 251 ? 'speech.webm' : 'speech.m4a').length);
      expect(Number(f.approxDurationMs)).toBeGreaterThan(70_000);
      expect(Number(f.approxDurationMs)).toBeLessThan(71_000);
      expect(f.bitrate).toBeGreaterThan(0);
    }
  });

  it('WEB gets a signatureCipher instead of a URL', async () => {
    const { json } = await player(videoIds.speechNoCaptions, 'WEB', { sts: true });
    for (const f of json.streamingData.adaptiveFormats as Json[]) {
      expect(f.url).toBeUndefined();
      expect(f.signatureCipher).toContain('url=');
    }
  });

  it('serves ranges (query and header) that join to the file, and refuses unranged downloads', async () => {
    const { json } = await player(videoIds.speechNoCaptions, 'VISIONOS');
    const f = (json.streamingData.adaptiveFormats as Json[]).find((x) => x.itag === 140)!;
    const whole = audio('speech.m4a');
    const size = whole.length;
    const unranged = await fetch(f.url as string);
    expect(unranged.status).toBe(403);
    await unranged.arrayBuffer();
    const half = Math.floor(size / 2);
    const first = await fetch(`${f.url as string}&range=0-${half - 1}`);
    expect(first.status).toBe(200);
    const second = await fetch(f.url as string, { headers: { range: `bytes=${half}-` } });
    expect(second.status).toBe(206);
    expect(second.headers.get('content-range')).toBe(`bytes ${half}-${size - 1}/${size}`);
    const joined = Buffer.concat([
      Buffer.from(await first.arrayBuffer()),
      Buffer.from(await second.arrayBuffer()),
    ]);
    expect(joined.equals(whole)).toBe(true);
    const past = await fetch(f.url as string, { headers: { range: `bytes=${size}-` } });
    expect(past.status).toBe(416);
    await past.arrayBuffer();
    const tooBig = await fetch(`${f.url as string}&range=0-${MAX_PIECE_BYTES}`);
    expect(tooBig.status).toBe(403);
    await tooBig.arrayBuffer();
  });

  it('the audio is decodable and as long as the player says', () => {
    for (const file of ['speech.webm', 'speech.m4a']) {
      const path = new URL(`../audio/${file}`, import.meta.url).pathname;
      const out = execFileSync(
        'ffprobe',
        ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', path],
        {
          encoding: 'utf8',
        },
      );
      expect(Math.abs(Number(out.trim()) - SPEECH_LENGTH_SECONDS)).toBeLessThan(1);
    }
  });
});

describe('the audio host for benchmarks: other audio files and a bandwidth', () => {
  it('serves the speech video from other files at the configured bandwidth, and says so', async () => {
    const webm = new URL('../audio/speech.webm', import.meta.url).pathname;
    const m4a = new URL('../audio/speech.m4a', import.meta.url).pathname;
    const served: { bytes: number; startMs: number; endMs: number }[] = [];
    const other = await startFakeYouTube({
      speechAudio: { webm, m4a, durationMs: 3_723_000 },
      audioBytesPerSecond: 200_000,
      onAudioServed: (s) => void served.push(s),
    });
    try {
      const res = await fetch(`${other.url}/youtubei/v1/player`, {
        method: 'POST',
        body: JSON.stringify({
          videoId: videoIds.speechNoCaptions,
          context: { client: { clientName: 'VISIONOS', clientVersion: '1.04' } },
        }),
      });
      const json = (await res.json()) as Json;
      expect(json.videoDetails.lengthSeconds).toBe('3723');
      const opus = (json.streamingData.adaptiveFormats as Json[]).find((f) => f.itag === 251)!;
      expect(opus.approxDurationMs).toBe('3723000');
      const started = performance.now();
      const piece = await fetch(opus.url as string, { headers: { range: 'bytes=0-99999' } });
      const body = Buffer.from(await piece.arrayBuffer());
      const ms = performance.now() - started;
      expect(piece.status).toBe(206);
      expect(body.equals(audio('speech.webm').subarray(0, 100_000))).toBe(true);
      // 100 kB at 200 kB/s: half a second, never faster
      expect(ms).toBeGreaterThanOrEqual(480);
      expect(served).toHaveLength(1);
      expect(served[0]!.bytes).toBe(100_000);
      expect(served[0]!.endMs - served[0]!.startMs).toBeGreaterThanOrEqual(480);
    } finally {
      await other.close();
    }
  });
});

describe('the made-for-kids speech video and recorded stream URLs', () => {
  it.each(['VISIONOS', 'ANDROID', 'IOS', 'WEB'])('%s gets UNPLAYABLE (made for kids)', async (client) => {
    const { status, json } = await player(videoIds.madeForKidsAudio, client);
    expect(status).toBe(200);
    expect(json.playabilityStatus.status).toBe('UNPLAYABLE');
    expect(JSON.stringify(json.playabilityStatus)).toContain('made for kids');
    expect(json.streamingData).toBeUndefined();
  });

  it('IOS_PRODUCER plays it: mp4a (itag 140) alone, a plain URL that serves ranges, no captions', async () => {
    const { json } = await player(videoIds.madeForKidsAudio, 'IOS_PRODUCER');
    expect(json.playabilityStatus.status).toBe('OK');
    expect(json.videoDetails.videoId).toBe(videoIds.madeForKidsAudio);
    expect(tracks(json)).toEqual([]);
    const formats = json.streamingData.adaptiveFormats as Json[];
    expect(formats.map((f) => [f.itag, f.mimeType])).toEqual([[140, 'audio/mp4; codecs="mp4a.40.2"']]);
    const piece = await fetch(`${formats[0]!.url as string}&range=0-99`);
    expect(piece.status).toBe(200);
    expect(Buffer.from(await piece.arrayBuffer())).toEqual(audio('speech.m4a').subarray(0, 100));
  });

  it('today: a recorded answer’s stream URLs point at the fake, which answers them 404', async () => {
    const { json } = await player(videoIds.manualAndAuto, 'IOS_PRODUCER');
    const urls = (json.streamingData.adaptiveFormats as Json[]).map((f) => f.url as string);
    expect(urls.length).toBeGreaterThan(0);
    for (const url of urls) expect(url.startsWith(`${fake.url}/videoplayback?`)).toBe(true);
    const dead = await fetch(`${urls[0]!}&range=0-99`);
    expect(dead.status).toBe(404);
    await dead.arrayBuffer();
  });
});

describe('recorded media hosts', () => {
  it('are this fake: a recorded plain audio URL points at /videoplayback here, which has no such stream', async () => {
    for (const client of ['VISIONOS', 'ANDROID', 'IOS', 'WEB']) {
      const { json } = await player(videoIds.noCaptions, client);
      expect(JSON.stringify(json), client).not.toContain('googlevideo.com/');
    }
    const { json } = await player(videoIds.noCaptions, 'VISIONOS');
    const plain = ((json.streamingData?.adaptiveFormats ?? []) as Json[]).filter((f) => f.url);
    expect(plain.length).toBeGreaterThan(0);
    for (const f of plain) expect(f.url).toMatch(new RegExp(`^${fake.url}/videoplayback\\?`));
    const piece = await get(
      `${new URL(plain[0]!.url as string).pathname}${new URL(plain[0]!.url as string).search}`,
      {
        range: 'bytes=0-99',
      },
    );
    expect(piece.status).toBe(404);
  });

  it('are rewritten plain and with JSON-escaped slashes, the manifest hosts too', () => {
    const origin = 'http://127.0.0.1:9';
    expect(mediaOnOrigin('"https://rr1---sn-4g5lznl7.googlevideo.com/videoplayback?a=1"', origin)).toBe(
      '"http://127.0.0.1:9/videoplayback?a=1"',
    );
    expect(mediaOnOrigin('"https:\\/\\/rr2---sn-ab.googlevideo.com\\/videoplayback?b"', origin)).toBe(
      '"http:\\/\\/127.0.0.1:9\\/videoplayback?b"',
    );
    expect(mediaOnOrigin('https://manifest.googlevideo.com/api/manifest/hls', origin)).toBe(
      'http://127.0.0.1:9/api/manifest/hls',
    );
  });
});

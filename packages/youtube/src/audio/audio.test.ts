import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AudioFetchError,
  AudioTooLargeError,
  audioHostsOf,
  fetchAudioRanged,
  isAudioHost,
  pickAudioFormat,
} from './audio.ts';

describe('pickAudioFormat', () => {
  it('picks the lowest-bitrate audio-only format with a plain URL', () => {
    const pick = pickAudioFormat({
      streamingData: {
        adaptiveFormats: [
          { itag: 137, url: 'https://h/v', mimeType: 'video/mp4', bitrate: 10 },
          { itag: 140, url: 'https://h/140', mimeType: 'audio/mp4', bitrate: 130_000 },
          { itag: 249, signatureCipher: 's=x&url=https://h/249', bitrate: 50_000 },
          {
            itag: 139,
            url: 'https://h/139',
            mimeType: 'audio/mp4',
            bitrate: 48_000,
            contentLength: '420000',
            approxDurationMs: '70000',
          },
          { itag: 251, url: 'https://h/251', mimeType: 'audio/webm', bitrate: 160_000 },
        ],
      },
    });
    expect(pick).toEqual({
      itag: 139,
      url: 'https://h/139',
      mimeType: 'audio/mp4',
      bitrate: 48_000,
      contentLength: 420_000,
      approxDurationMs: 70_000,
    });
  });

  it('answers undefined without an audio-only plain URL', () => {
    expect(pickAudioFormat({})).toBeUndefined();
    expect(pickAudioFormat(null)).toBeUndefined();
    expect(
      pickAudioFormat({ streamingData: { adaptiveFormats: [{ itag: 251, signatureCipher: 'x' }] } }),
    ).toBeUndefined();
  });
});

describe('fetchAudioRanged', () => {
  const audio = Buffer.alloc(2_500_000);
  for (let i = 0; i < audio.length; i++) audio[i] = i % 251;
  const ranges: string[] = [];
  /** The Host of every request past the redirects. */
  const hostsAsked: string[] = [];
  let maxServed = 0;
  let server: Server;
  let base = '';

  beforeAll(async () => {
    server = createServer((req, res) => {
      const range = req.headers.range ?? '';
      ranges.push(range);
      if (req.url === '/unranged') {
        res.writeHead(200, { 'content-length': audio.length });
        res.end(audio);
        return;
      }
      if (req.url === '/elsewhere' || req.url === '/here') {
        const port = (server.address() as AddressInfo).port;
        const host = req.url === '/here' ? '127.0.0.1' : 'localhost';
        res.writeHead(302, { location: `http://${host}:${port}/a` }).end();
        return;
      }
      hostsAsked.push(req.headers.host ?? '');
      if (req.url === '/broken') {
        res.writeHead(403).end();
        return;
      }
      const m = /^bytes=(\d+)-(\d+)$/.exec(range);
      if (!m) {
        res.writeHead(400).end();
        return;
      }
      const start = Number(m[1]);
      const end = Math.min(Number(m[2]), audio.length - 1);
      if (start >= audio.length) {
        res.writeHead(416, { 'content-range': `bytes */${audio.length}` }).end();
        return;
      }
      maxServed = Math.max(maxServed, end - start + 1);
      res.writeHead(206, { 'content-range': `bytes ${start}-${end}/${audio.length}` });
      res.end(audio.subarray(start, end + 1));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('fetches the whole file in ranges no larger than asked, handing on chunks as they arrive', async () => {
    ranges.length = 0;
    const chunks: number[] = [];
    const got: Buffer[] = [];
    for await (const chunk of fetchAudioRanged(`${base}/a`, { pieceBytes: 1 << 20 })) {
      chunks.push(chunk.byteLength);
      got.push(Buffer.from(chunk));
    }
    expect(Buffer.concat(got).equals(audio)).toBe(true);
    expect(ranges).toEqual(['bytes=0-1048575', 'bytes=1048576-2097151', 'bytes=2097152-3145727']);
    expect(maxServed).toBeLessThanOrEqual(1 << 20);
    // Network chunks, not whole pieces gathered in memory.
    expect(Math.max(...chunks)).toBeLessThan(1 << 20);
  });

  it('stops at the cap from Content-Range before reading the body', async () => {
    ranges.length = 0;
    const run = async () => {
      for await (const _ of fetchAudioRanged(`${base}/a`, { maxBytes: 2_000_000 })) void _;
    };
    await expect(run()).rejects.toBeInstanceOf(AudioTooLargeError);
    expect(ranges).toHaveLength(1);
  });

  it('caps a host that ignores Range', async () => {
    const run = async () => {
      for await (const _ of fetchAudioRanged(`${base}/unranged`, { maxBytes: 1_000_000 })) void _;
    };
    await expect(run()).rejects.toBeInstanceOf(AudioTooLargeError);
  });

  it('accepts audio only from the pinned hosts, and follows no redirect to another', async () => {
    const read = async (url: string) => {
      const got: Uint8Array[] = [];
      for await (const chunk of fetchAudioRanged(url, { hosts: ['127.0.0.1'] })) got.push(chunk);
      return Buffer.concat(got);
    };
    hostsAsked.length = 0;
    const port = new URL(base).port;
    await expect(read(`http://localhost:${port}/a`)).rejects.toBeInstanceOf(AudioFetchError);
    await expect(read(`${base}/elsewhere`)).rejects.toBeInstanceOf(AudioFetchError);
    // neither the URL's host nor the redirect's was ever asked for audio
    expect(hostsAsked.filter((h) => h.startsWith('localhost'))).toEqual([]);
    expect((await read(`${base}/here`)).equals(audio)).toBe(true);
  });

  it('pins the platform’s media hosts, and a stand-in platform’s own host', () => {
    expect(audioHostsOf('https://www.youtube.com')).toEqual(['googlevideo.com']);
    expect(audioHostsOf('http://127.0.0.1:4010')).toEqual(['googlevideo.com', '127.0.0.1']);
    const hosts = audioHostsOf('https://www.youtube.com');
    expect(isAudioHost('https://rr3---sn-abc.googlevideo.com/videoplayback?x=1', hosts)).toBe(true);
    expect(isAudioHost('https://googlevideo.com.evil.example/videoplayback', hosts)).toBe(false);
    expect(isAudioHost('http://169.254.169.254/latest/meta-data', hosts)).toBe(false);
    expect(isAudioHost('file:///etc/passwd', ['googlevideo.com'])).toBe(false);
  });

  it('fails on an unexpected status', async () => {
    const run = async () => {
      for await (const _ of fetchAudioRanged(`${base}/broken`)) void _;
    };
    await expect(run()).rejects.toBeInstanceOf(AudioFetchError);
  });
});

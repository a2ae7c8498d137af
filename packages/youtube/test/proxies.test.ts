import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeYouTube, videoIds, type FakeYouTube } from '@subx/testing/fake-youtube';
import { YouTubeClient, loadYouTubeConfig } from '../src/index.ts';

/** A CONNECT proxy on loopback; `target` decides where tunnels really go. */
async function startProxy(target: (host: string, port: number) => { host: string; port: number }) {
  const tunnels: string[] = [];
  const server: Server = createServer((_req, res) => {
    res.writeHead(405).end();
  });
  server.on('connect', (req, socket, head) => {
    const [host = '', port = '80'] = (req.url ?? '').split(':');
    tunnels.push(req.url ?? '');
    const to = target(host, Number(port));
    const upstream = connect(to.port, to.host, () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    tunnels,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

let fake: FakeYouTube;
let blockedFake: FakeYouTube;
let blockingProxy: Awaited<ReturnType<typeof startProxy>>;
let goodProxy: Awaited<ReturnType<typeof startProxy>>;

beforeAll(async () => {
  fake = await startFakeYouTube();
  blockedFake = await startFakeYouTube();
  const blockedPort = Number(new URL(blockedFake.url).port);
  // every tunnel through this proxy lands on a fake that answers 429, like a burned egress IP
  blockingProxy = await startProxy(() => ({ host: '127.0.0.1', port: blockedPort }));
  goodProxy = await startProxy((host, port) => ({ host, port }));
});
afterAll(async () => {
  await Promise.all([fake.close(), blockedFake.close(), blockingProxy.close(), goodProxy.close()]);
});

describe('proxy pool', () => {
  it('sends requests through the proxy and rotates to the next one when blocked', async () => {
    blockedFake.failNext({ kind: 'status', status: 429 }, { times: 100 });
    const config = loadYouTubeConfig({
      YOUTUBE_BASE_URL: fake.url,
      YOUTUBE_PROXIES: `${blockingProxy.url},${goodProxy.url}`,
    });
    const yt = YouTubeClient.create(config);
    try {
      const t = await yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
      expect(t.segments).toHaveLength(7);
    } finally {
      await yt.close();
    }
    expect(blockedFake.requests).toHaveLength(1);
    expect(blockedFake.requests[0]?.status).toBe(429);
    // the session moved to the good proxy and stays there for the rest of the video
    expect(fake.requests.map((r) => r.endpoint).sort()).toEqual(['player', 'player', 'timedtext']);
    expect(goodProxy.tunnels.length).toBeGreaterThanOrEqual(1);
    expect(blockingProxy.tunnels.length).toBe(1);
  });

  it('skips a quarantined egress until its probe succeeds', async () => {
    blockedFake.reset();
    fake.reset();
    blockedFake.failNext({ kind: 'status', status: 429 }, { times: 100 });
    let now = Date.UTC(2026, 5, 1);
    const config = loadYouTubeConfig({
      YOUTUBE_BASE_URL: fake.url,
      YOUTUBE_PROXIES: `${blockingProxy.url},${goodProxy.url}`,
      YOUTUBE_SESSIONS: '4',
      YOUTUBE_EGRESS_QUARANTINE_MS: '300000',
    });
    const changes: string[] = [];
    const egresses: string[] = [];
    const yt = YouTubeClient.create(config, {
      clock: { now: () => now },
      observer: {
        call: (c) => void egresses.push(`${c.egress}`),
        egress: ({ egress, quarantined }) => void changes.push(`${egress}:${quarantined ? 'in' : 'out'}`),
      },
    });
    const validates = async (n: number) => {
      for (let i = 0; i < n; i++) expect((await yt.validate(videoIds.manualAndAuto)).valid).toBe(true);
    };
    try {
      await validates(4);
      // one 429, then every session whose home is the burned egress goes through the other one
      expect(blockedFake.requests.map((r) => r.status)).toEqual([429]);
      // the metrics see both egresses from the start, then the first one quarantined
      expect(changes).toEqual(['0:out', '1:out', '0:in']);
      expect(new Set(egresses)).toEqual(new Set(['0', '1']));
      // the egress recovers, but nothing is sent through it before its probe is due
      blockedFake.reset();
      await validates(4);
      expect(blockedFake.requests).toHaveLength(0);
      now += 300_000;
      await validates(4);
      expect(blockedFake.requests.length).toBeGreaterThanOrEqual(1);
      expect(blockedFake.requests.every((r) => r.status === 200)).toBe(true);
      expect(changes.at(-1)).toBe('0:out');
      // the probe succeeded: the egress is back for its sessions
      const afterProbe = blockedFake.requests.length;
      await validates(4);
      expect(blockedFake.requests.length).toBeGreaterThan(afterProbe);
    } finally {
      await yt.close();
    }
  });

  it('reports UPSTREAM_BLOCKED when every proxy is blocked', async () => {
    blockedFake.reset();
    blockedFake.failNext({ kind: 'status', status: 429 }, { times: 100 });
    const config = loadYouTubeConfig({
      YOUTUBE_BASE_URL: fake.url,
      YOUTUBE_PROXIES: `${blockingProxy.url},${blockingProxy.url}`,
    });
    const yt = YouTubeClient.create(config);
    try {
      await expect(yt.validate(videoIds.manualAndAuto)).rejects.toMatchObject({
        code: 'UPSTREAM_BLOCKED',
        reason: 'http_429',
      });
    } finally {
      await yt.close();
    }
    expect(blockedFake.requests).toHaveLength(2);
  });

  it('with one rotating proxy, retries a blocked request on a new connection (a new egress address)', async () => {
    blockedFake.reset();
    blockedFake.failNext({ kind: 'status', status: 429 }, { times: 100 });
    const blockedPort = Number(new URL(blockedFake.url).port);
    let tunnels = 0;
    // a rotating proxy: its first two connections leave through a burned address, the third through a good one
    const rotating = await startProxy((host, port) =>
      ++tunnels <= 2 ? { host: '127.0.0.1', port: blockedPort } : { host, port },
    );
    const config = loadYouTubeConfig({
      YOUTUBE_BASE_URL: fake.url,
      YOUTUBE_PROXIES: rotating.url,
      YOUTUBE_BLOCKED_RETRIES: '2',
    });
    const yt = YouTubeClient.create(config);
    try {
      const v = await yt.validate(videoIds.manualAndAuto);
      expect(v.valid).toBe(true);
    } finally {
      await yt.close();
      await rotating.close();
    }
    expect(blockedFake.requests.map((r) => r.status)).toEqual([429, 429]);
    expect(rotating.tunnels.length).toBe(3);
  });

  it('with one rotating proxy, gives up after YOUTUBE_BLOCKED_RETRIES new connections', async () => {
    blockedFake.reset();
    blockedFake.failNext({ kind: 'status', status: 429 }, { times: 100 });
    const config = loadYouTubeConfig({
      YOUTUBE_BASE_URL: fake.url,
      YOUTUBE_PROXIES: blockingProxy.url,
      YOUTUBE_BLOCKED_RETRIES: '1',
    });
    const yt = YouTubeClient.create(config);
    try {
      await expect(yt.validate(videoIds.manualAndAuto)).rejects.toMatchObject({ reason: 'http_429' });
    } finally {
      await yt.close();
    }
    expect(blockedFake.requests).toHaveLength(2);
  });
});

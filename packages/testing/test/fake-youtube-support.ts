/** Shared by the fake-youtube-*.test.ts files: one fake per file and requests against it. */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { fixturesDir, startFakeYouTube, type FakeYouTube } from '@subx/testing/fake-youtube';

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const VERSIONS: Record<string, string> = {
  WEB: '2.20261115.01.00',
  MWEB: '2.20261115.01.00',
  VISIONOS: '1.04',
  ANDROID: '20.10.38',
  IOS: '20.10.4',
};

/** The recorded tokens NewPipe sent (read from the mocks' own request bodies). */
export const RECORDED_PLAYLIST_TOKEN = recordedToken(
  'newpipe/62b3c3b/playlist/learning/generated_mock_3.json',
);
export const RECORDED_COMMENTS_TOKEN = recordedToken(
  'newpipe/43f8e6e/youtubecommentsextractor/replies/generated_mock_3.json',
);

function recordedToken(file: string): string {
  const mock = JSON.parse(readFileSync(`${fixturesDir()}${file}`, 'utf8')) as {
    request: { dataToSend: number[] };
  };
  return (JSON.parse(Buffer.from(mock.request.dataToSend).toString('utf8')) as { continuation: string })
    .continuation;
}

/** The fake of the running test file (started by `useFakeYouTube`). */
export let fake: FakeYouTube;

export async function post(
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

export const context = (clientName: string, extra: Json = {}): Json => ({
  client: { clientName, clientVersion: VERSIONS[clientName] ?? '1.0', hl: 'en', gl: 'US', ...extra },
});

export const player = (
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

export const tracks = (p: Json): Json[] => p.captions?.playerCaptionsTracklistRenderer?.captionTracks ?? [];

export async function get(path: string, headers: Record<string, string> = {}) {
  const started = performance.now();
  const res = await fetch(`${fake.url}${path}`, { headers });
  const body = await res.text();
  return { status: res.status, body, type: res.headers.get('content-type'), ms: performance.now() - started };
}

/** A caption URL pointed at the fake (recorded URLs name www.youtube.com), with parameters set. */
export const local = (baseUrl: string, set: Record<string, string> = {}): string => {
  const u = new URL(baseUrl, 'https://www.youtube.com');
  for (const [k, v] of Object.entries(set)) u.searchParams.set(k, v);
  return `${u.pathname}${u.search}`;
};

/** One fake per test file, in today mode, reset before each test. */
export function useFakeYouTube(): void {
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
}

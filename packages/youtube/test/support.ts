import { startFakeYouTube, type FakeYouTube } from '@subx/testing/fake-youtube';
import { YouTubeClient, loadYouTubeConfig, type YouTubeClientDeps } from '../src/index.ts';
import type { FetchLike } from '../src/types.ts';

/** 2026-06-01T00:00:00Z: relative comment times are computed against this injected clock. */
export const NOW = Date.UTC(2026, 5, 1);

/** The fake's two behaviours: the platform as it answers since Aug 2026, and pure replay of recordings. */
export const MODES = ['today', 'replay'] as const;
export type Mode = (typeof MODES)[number];

export async function setup(mode: Mode = 'today'): Promise<FakeYouTube> {
  return startFakeYouTube({ mode });
}

/** The fake's request log as `endpoint:client`, with `:masked` for field-masked calls. */
export const callLog = (fake: FakeYouTube): string[] =>
  fake.requests.map((r) => `${r.endpoint}:${r.clientName ?? ''}${r.query.$fields ? ':masked' : ''}`);

/** One upstream call as the client saw it: when it was sent and when its answer was complete. */
export interface TimedCall {
  url: string;
  start: number;
  end: number;
}

/** A fetch that records every call's start and end (the body read included). */
export function timedFetch(calls: TimedCall[]): FetchLike {
  return async (input, init) => {
    const start = performance.now();
    const res = await fetch(input, init as RequestInit);
    const body = await res.arrayBuffer();
    calls.push({ url: input, start, end: performance.now() });
    return new Response(body, { status: res.status, headers: res.headers });
  };
}

/**
 * Sequential round trips: the longest chain of calls where each was sent only after the previous one's
 * answer was complete. Calls sent in parallel share a round trip.
 */
export function roundTrips(calls: readonly TimedCall[]): number {
  const depth = new Map<TimedCall, number>();
  const sorted = [...calls].sort((a, b) => a.start - b.start);
  for (const c of sorted) {
    let d = 1;
    for (const p of sorted) if (p.end <= c.start) d = Math.max(d, (depth.get(p) ?? 1) + 1);
    depth.set(c, d);
  }
  return Math.max(0, ...depth.values());
}

/** Breaker settings that no single test reaches, so tests stay independent of each other's blocks. */
const CALM_BREAKER = { YOUTUBE_BREAKER_MIN_BLOCKS: '1000000' };

export function clientFor(
  fake: FakeYouTube,
  env: Record<string, string> = {},
  deps: YouTubeClientDeps = {},
): YouTubeClient {
  const config = loadYouTubeConfig({
    YOUTUBE_BASE_URL: fake.url,
    YOUTUBE_RETRY_BASE_MS: '1',
    YOUTUBE_VERSION_REFRESH_MS: '0',
    ...CALM_BREAKER,
    ...env,
  });
  return YouTubeClient.create(config, { clock: { now: () => NOW }, ...deps });
}

export async function errorOf(p: Promise<unknown>): Promise<{
  code: string;
  reason?: string;
  retryable: boolean;
  message: string;
  details?: Record<string, unknown>;
  retryAfterSeconds?: number;
}> {
  try {
    await p;
  } catch (err) {
    return err as never;
  }
  throw new Error('expected the call to fail');
}

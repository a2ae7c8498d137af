import { startFakeYouTube, type FakeYouTube } from '@subx/testing/fake-youtube';
import { YouTubeClient, loadYouTubeConfig } from '../src/index.ts';

/** 2026-06-01T00:00:00Z: relative comment times are computed against this injected clock. */
export const NOW = Date.UTC(2026, 5, 1);

export async function setup(): Promise<FakeYouTube> {
  return startFakeYouTube();
}

export function clientFor(fake: FakeYouTube, env: Record<string, string> = {}): YouTubeClient {
  const config = loadYouTubeConfig({ YOUTUBE_BASE_URL: fake.url, YOUTUBE_RETRY_BASE_MS: '1', ...env });
  return YouTubeClient.create(config, { clock: { now: () => NOW } });
}

export async function errorOf(p: Promise<unknown>): Promise<{
  code: string;
  reason?: string;
  retryable: boolean;
  message: string;
  details?: Record<string, unknown>;
}> {
  try {
    await p;
  } catch (err) {
    return err as never;
  }
  throw new Error('expected the call to fail');
}

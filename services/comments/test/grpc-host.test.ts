// GRPC services bind GRPC_HOST (default 0.0.0.0) instead of always every
// interface. 127.0.0.2 is a loopback address of its own on Linux: bound there, the service must
// answer on it and not on 127.0.0.1.
import { afterEach, describe, expect, it } from 'vitest';
import { createInMemoryKeyValueStore } from '@subx/ports';
import { checkHealth, createLogger } from '@subx/service-kit';
import { loadYouTubeConfig } from '@subx/youtube';
import { loadCommentsConfig, startCommentsService } from '../src/index.ts';

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

describe('GRPC_HOST', () => {
  it('defaults to every interface', () => {
    expect(loadCommentsConfig({}).GRPC_HOST).toBe('0.0.0.0');
  });

  it('binds only the configured address', async () => {
    const service = await startCommentsService({
      config: loadCommentsConfig({ GRPC_PORT: '0', GRPC_HOST: '127.0.0.2', LOG_LEVEL: 'silent' }),
      youtube: loadYouTubeConfig({ YOUTUBE_BASE_URL: 'http://127.0.0.1:9' }),
      kv: createInMemoryKeyValueStore(),
      logger: createLogger({ service: 'comments-test', level: 'silent' }),
    });
    stops.push(() => service.stop(1_000));
    expect(await checkHealth(`127.0.0.2:${service.port}`, '', 3_000)).toBe('SERVING');
    expect(await checkHealth(`127.0.0.1:${service.port}`, '', 1_000)).toBe('UNREACHABLE');
  });
});

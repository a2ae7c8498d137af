import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { commentsV1 } from '@subx/contracts';
import { createInMemoryKeyValueStore } from '@subx/ports';
import { createGrpcClient, createLogger, type GrpcClient } from '@subx/service-kit';
import { startFakeYouTube, videoIds, type FakeYouTube } from '@subx/testing/fake-youtube';
import { startGrpcTestService, type GrpcTestService } from '@subx/testing/grpc-service';
import { loadYouTubeConfig } from '@subx/youtube';
import { loadCommentsConfig, startCommentsService, type RunningCommentsService } from '../src/index.ts';

const logger = createLogger({ service: 'comments-test', level: 'silent' });

describe('comments over gRPC against the fake YouTube', () => {
  let youtube: FakeYouTube;
  let comments: GrpcTestService<RunningCommentsService, GrpcClient<commentsV1.CommentsServiceClient>>;
  let client: GrpcClient<commentsV1.CommentsServiceClient>;

  beforeAll(async () => {
    youtube = await startFakeYouTube();
    comments = await startGrpcTestService({
      start: (host) =>
        startCommentsService({
          config: loadCommentsConfig({ GRPC_PORT: '0', LOG_LEVEL: 'silent' }),
          youtube: loadYouTubeConfig({ YOUTUBE_BASE_URL: youtube.url, YOUTUBE_RETRIES: '0' }),
          kv: createInMemoryKeyValueStore(),
          logger,
          host,
        }),
      client: (address) =>
        createGrpcClient(commentsV1.CommentsServiceClient, address, { defaultDeadlineMs: 20_000 }),
    });
    client = comments.client;
  });

  afterAll(async () => {
    await comments?.stop();
    await youtube?.close();
  });

  beforeEach(() => youtube.reset());

  const get = (videoId: string, max: number, forceRefresh = false) =>
    client.getComments({
      videoId,
      max,
      sort: commentsV1.CommentSort.COMMENT_SORT_RELEVANCE,
      forceRefresh,
      cachedOnly: false,
    });

  it('downloads comments with replies after their parent, then answers smaller requests from the cache', async () => {
    const first = await get(videoIds.syntheticComments, 60);
    expect(first.cached).toBe(false);
    expect(first.commentsDisabled).toBe(false);
    expect(first.comments.length).toBeGreaterThan(20);
    expect(first.comments.length).toBeLessThanOrEqual(60);
    const ids = new Set<string>();
    for (const c of first.comments) {
      if (c.isReply) expect(ids.has(c.parentId!)).toBe(true);
      else ids.add(c.id);
      expect(c.author).toBeTruthy();
      expect(c.publishedAt).toBeGreaterThan(0n);
      expect(c.likes).toBeGreaterThanOrEqual(0n);
    }
    const calls = youtube.count();

    const smaller = await get(videoIds.syntheticComments, 10);
    expect(smaller.cached).toBe(true);
    expect(smaller.comments).toEqual(first.comments.slice(0, 10));
    expect(youtube.count()).toBe(calls);
  });

  it('fetches again when a larger max than the cached one is asked, and on force_refresh', async () => {
    await get(videoIds.syntheticComments, 5, true);
    const calls = youtube.count();
    const bigger = await get(videoIds.syntheticComments, 40);
    expect(bigger.cached).toBe(false);
    expect(youtube.count()).toBeGreaterThan(calls);
  });

  it('reports comments_disabled with no comments instead of failing', async () => {
    const r = await get(videoIds.commentsDisabled, 100);
    expect(r.commentsDisabled).toBe(true);
    expect(r.comments).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import { commentsV1 } from '@subx/contracts';
import { createInMemoryKeyValueStore, createJsonCache } from '@subx/ports';
import type { CommentsResult, YouTubeClient } from '@subx/youtube';
import { createCommentsService } from './comments-service.ts';

const comment = (n: number) => ({
  id: `c${n}`,
  author: `@u${n}`,
  text: `comment ${n}`,
  likes: 0,
  publishedAt: 1_700_000_000,
  isReply: false,
});

/** The platform client as the service sees it: a scripted sequence of getComments answers. */
function scripted(answers: CommentsResult[]) {
  let calls = 0;
  const youtube: Pick<YouTubeClient, 'getComments'> = {
    getComments: async () => answers[Math.min(calls++, answers.length - 1)] as CommentsResult,
  };
  return { youtube, calls: () => calls };
}

describe('comments cache', () => {
  const request = (max: number, cachedOnly = false) => ({
    videoId: 'aaaaaaaaaaa',
    max,
    sort: commentsV1.CommentSort.COMMENT_SORT_RELEVANCE,
    forceRefresh: false,
    cachedOnly,
  });

  it('a listing that ended short of max is complete and serves later requests from the cache', async () => {
    const yt = scripted([{ comments: [comment(1), comment(2)], commentsDisabled: false, totalCount: 2 }]);
    const svc = createCommentsService({
      youtube: yt.youtube,
      cache: createJsonCache(createInMemoryKeyValueStore(), { prefix: 'test' }),
      ttlMs: 60_000,
    });
    await svc.getComments(request(100));
    const again = await svc.getComments(request(100));
    expect(again.cached).toBe(true);
    expect(yt.calls()).toBe(1);
  });

  it('a partial listing (the platform stopped answering pages) is never taken for the whole thread', async () => {
    const yt = scripted([
      { comments: [comment(1), comment(2)], commentsDisabled: false, totalCount: 50, partial: true },
      { comments: [comment(1), comment(2), comment(3)], commentsDisabled: false, totalCount: 50 },
    ]);
    const svc = createCommentsService({
      youtube: yt.youtube,
      cache: createJsonCache(createInMemoryKeyValueStore(), { prefix: 'test' }),
      ttlMs: 60_000,
    });
    const first = await svc.getComments(request(100));
    expect(first.comments).toHaveLength(2);
    const second = await svc.getComments(request(100));
    expect(second.cached).toBe(false);
    expect(second.comments).toHaveLength(3);
    expect(yt.calls()).toBe(2);
  });

  it('a cache-only question never reaches the platform: a miss is empty and uncached, a hit is the listing', async () => {
    const yt = scripted([{ comments: [comment(1), comment(2)], commentsDisabled: false, totalCount: 2 }]);
    const svc = createCommentsService({
      youtube: yt.youtube,
      cache: createJsonCache(createInMemoryKeyValueStore(), { prefix: 'test' }),
      ttlMs: 60_000,
    });
    const miss = await svc.getComments(request(100, true));
    expect(miss).toMatchObject({ cached: false, comments: [] });
    expect(yt.calls()).toBe(0);
    await svc.getComments(request(100));
    const hit = await svc.getComments(request(100, true));
    expect(hit.cached).toBe(true);
    expect(hit.comments).toHaveLength(2);
    expect(yt.calls()).toBe(1);
  });
});

/** Comments: watch-next, then comments pages with their reply threads. */
import { AppError, Errors } from '@subx/errors';
import type { Lease } from '../innertube.ts';
import { parseCommentsPage, type CommentsPage, type CommentThread } from '../parse/comments.ts';
import { at, isObj } from '../parse/json.ts';
import { parseCommentsEntry } from '../parse/next.ts';
import { commentsContinuation } from '../tokens.ts';
import type { Comment, CommentSort, CommentsResult } from '../types.ts';
import type { YouTubeOperations } from './context.ts';

/** The most comments one call returns. */
export const MAX_COMMENTS = 2000;

/**
 * Watch-next, then comments pages. Disabled only on the explicit "turned off" message; with no entry at
 * all the first continuation is built from the video id. An empty page is asked again once: an empty
 * first page of a video that has comments is UPSTREAM_ERROR, a later one ends the listing as `partial`
 * (callers must not cache it as complete).
 */
export async function getComments(
  yt: YouTubeOperations,
  opts: { videoId: string; max: number; sort: CommentSort },
): Promise<CommentsResult> {
  const { videoId } = opts;
  const max = Math.min(MAX_COMMENTS, Math.max(1, Math.floor(opts.max)));
  const web = yt.innertube.config.webClient;
  const lease = yt.innertube.lease();
  const next = await yt.innertube.post('next', web, { videoId }, { lease });
  if (!isObj(at(next, 'contents'))) throw await whyNoWatchNext(yt, videoId, lease);
  const entry = parseCommentsEntry(next);
  if (entry.disabled) return { comments: [], commentsDisabled: true, totalCount: 0 };
  const now = yt.clock.now();
  const page = (token: string, parentId?: string) =>
    yt.innertube
      .post('next', web, { continuation: token }, { lease })
      .then((raw) => parseCommentsPage(raw, now, parentId));
  /** A page with nothing on it is asked again once (the platform sometimes answers empty). */
  const pageOnceMore = async (token: string): Promise<CommentsPage> => {
    const p = await page(token);
    if (p.threads.length > 0 || p.nextToken) return p;
    yt.logger?.debug({ videoId }, 'empty comments page; asking once more');
    return page(token);
  };

  let topToken = entry.topToken;
  if (!topToken && entry.missing) {
    yt.logger?.debug({ videoId }, 'no comments entry in watch-next; building the continuation');
    topToken = commentsContinuation(videoId);
  }
  let token = opts.sort === 'time' ? entry.newestToken : topToken;
  let totalCount = entry.count;
  const emptyTwice = () =>
    Errors.upstreamError('The platform returned an empty comments page twice; retry later.');
  if (!token && opts.sort === 'time' && topToken) {
    // no sort menu in watch-next: the first comments page header has it (one extra call)
    const top = await pageOnceMore(topToken);
    totalCount = top.totalCount ?? totalCount;
    token = top.newestToken;
    if (!token && top.threads.length === 0) {
      if (totalCount === 0) return { comments: [], commentsDisabled: false, totalCount: 0 };
      throw emptyTwice();
    }
  }
  if (!token) throw Errors.upstreamError('Comments are enabled but no comments continuation was found.');

  const out: Comment[] = [];
  const seenIds = new Set<string>();
  const seenTokens = new Set<string>();
  const push = (c: Comment) => {
    if (out.length >= max || seenIds.has(c.id)) return;
    seenIds.add(c.id);
    out.push(c);
  };
  let partial = false;
  let pages = 0;
  while (token && out.length < max && !seenTokens.has(token)) {
    seenTokens.add(token);
    const p = await pageOnceMore(token);
    pages++;
    totalCount ??= p.totalCount;
    if (p.totalCount !== undefined && totalCount === entry.count) totalCount = p.totalCount;
    if (p.threads.length === 0) {
      // a video with no comments yet says so in its count; anything else is the platform failing
      if (pages === 1 && totalCount !== 0) throw emptyTwice();
      partial = pages > 1;
      break;
    }
    await collectThreads(yt, p.threads, out, push, max, seenTokens, page);
    token = p.nextToken;
  }
  return {
    comments: out,
    commentsDisabled: false,
    totalCount: totalCount ?? out.length,
    ...(partial ? { partial: true } : {}),
  };
}

/** Parents in order, each followed by its replies; reply pages are prefetched only within the budget. */
async function collectThreads(
  yt: YouTubeOperations,
  threads: CommentThread[],
  out: Comment[],
  push: (c: Comment) => void,
  max: number,
  seenTokens: Set<string>,
  page: (token: string, parentId?: string) => Promise<CommentsPage>,
): Promise<void> {
  const prefetched = new Map<number, Promise<CommentsPage>>();
  const prefetch = (from: number) => {
    let needed = out.length;
    for (let j = from; j < threads.length && j < from + yt.innertube.config.commentConcurrency; j++) {
      const t = threads[j] as CommentThread;
      needed += 1 + t.replies.length;
      if (needed >= max) break;
      if (t.repliesToken && !prefetched.has(j)) {
        const p = page(t.repliesToken, t.comment.id);
        p.catch(() => undefined);
        prefetched.set(j, p);
      }
      needed += Math.max(0, t.replyCount - t.replies.length);
    }
  };
  for (let i = 0; i < threads.length && out.length < max; i++) {
    const t = threads[i] as CommentThread;
    push(t.comment);
    for (const r of t.replies) push(r);
    let rtok = t.repliesToken;
    if (!rtok || out.length >= max || seenTokens.has(rtok)) continue;
    prefetch(i);
    let pending = prefetched.get(i) ?? page(rtok, t.comment.id);
    for (;;) {
      seenTokens.add(rtok);
      const replies = await pending;
      for (const r of replies.replies) push(r);
      // nested reply threads ("show more replies" under a reply) hang off the same parent
      for (const nested of replies.threads) {
        push({ ...nested.comment, isReply: true, parentId: t.comment.id });
        for (const r of nested.replies) push({ ...r, parentId: t.comment.id });
      }
      rtok = replies.nextToken;
      if (!rtok || out.length >= max || seenTokens.has(rtok)) break;
      pending = page(rtok, t.comment.id);
    }
  }
}

/**
 * Watch-next without contents says nothing about why; the player does (private, members-only,
 * geo, bot check, ...), so one player request classifies it the same way extraction does.
 */
async function whyNoWatchNext(yt: YouTubeOperations, videoId: string, lease: Lease): Promise<AppError> {
  try {
    for await (const _hit of yt.players.players(videoId, lease)) {
      // Playable, yet watch-next came back empty: the platform answered something we cannot use.
      return Errors.upstreamError('The platform returned an empty watch-next page for a playable video.');
    }
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  return Errors.videoNotFound(videoId);
}

import type { Comment } from '../types.ts';
import { parseCount, parseRelativeTime } from './counts.ts';
import { arr, at, continuationToken, findAll, isObj, str, text } from './json.ts';

/**
 * One page of comments (`/next` with a continuation). Since 2024 the thread nodes only carry keys; the data
 * lives in `frameworkUpdates.entityBatchUpdate.mutations[]` (joined on the key). The pre-2024 `commentRenderer`
 * shape is read too. Unknown nodes (e.g. commentFilterContextViewModel) are skipped.
 */

export interface CommentThread {
  comment: Comment;
  /** Replies delivered inside the thread (threaded layout, July 2026). */
  replies: Comment[];
  /** Token for (more) replies, when the thread has some that are not inline. */
  repliesToken?: string;
  /** Replies the platform announces (toolbar.replyCount); used to budget prefetching. */
  replyCount: number;
}

export interface CommentsPage {
  threads: CommentThread[];
  /** Bare comments of a replies page. */
  replies: Comment[];
  nextToken?: string;
  /** From the header of the first page ("21,051 Comments"). */
  totalCount?: number;
  newestToken?: string;
}

type Entities = Map<string, Record<string, unknown>>;

function entityMap(page: unknown): Entities {
  const map: Entities = new Map();
  for (const m of arr(at(page, 'frameworkUpdates', 'entityBatchUpdate', 'mutations'))) {
    const key = str(at(m, 'entityKey'));
    const payload = at(m, 'payload');
    if (key && isObj(payload)) map.set(key, payload);
  }
  return map;
}

function fromViewModel(
  vm: unknown,
  entities: Entities,
  nowMs: number,
  parentId?: string,
): Comment | undefined {
  const key = str(at(vm, 'commentKey'));
  const entity = key ? at(entities.get(key), 'commentEntityPayload') : undefined;
  const props = at(entity, 'properties');
  const id = str(at(props, 'commentId')) ?? str(at(vm, 'commentId'));
  if (!id || !isObj(props)) return undefined;
  const toolbar = at(entity, 'toolbar');
  const likeText = str(at(toolbar, 'likeCountNotliked')) ?? str(at(toolbar, 'likeCountA11y')) ?? '';
  const replyLevel = Number(at(props, 'replyLevel')) || 0;
  const isReply = parentId !== undefined || replyLevel > 0 || id.includes('.');
  const parent = parentId ?? (isReply && id.includes('.') ? id.slice(0, id.indexOf('.')) : undefined);
  return {
    id,
    author: str(at(entity, 'author', 'displayName')) ?? '',
    text: text(at(props, 'content')) ?? '',
    likes: parseCount(likeText) ?? 0,
    publishedAt: parseRelativeTime(str(at(props, 'publishedTime')), nowMs),
    isReply,
    ...(isReply && parent ? { parentId: parent } : {}),
  };
}

function fromLegacyRenderer(r: unknown, nowMs: number, parentId?: string): Comment | undefined {
  const id = str(at(r, 'commentId'));
  if (!id) return undefined;
  const isReply = parentId !== undefined || id.includes('.');
  return {
    id,
    author: text(at(r, 'authorText')) ?? '',
    text: text(at(r, 'contentText')) ?? '',
    likes: parseCount(text(at(r, 'voteCount')) ?? '') ?? 0,
    publishedAt: parseRelativeTime(text(at(r, 'publishedTimeText')), nowMs),
    isReply,
    ...(isReply ? { parentId: parentId ?? id.slice(0, id.indexOf('.')) } : {}),
  };
}

function commentOf(node: unknown, entities: Entities, nowMs: number, parentId?: string): Comment | undefined {
  const vm = at(node, 'commentViewModel', 'commentViewModel') ?? at(node, 'commentViewModel');
  if (isObj(vm)) return fromViewModel(vm, entities, nowMs, parentId);
  const legacy = at(node, 'comment', 'commentRenderer') ?? at(node, 'commentRenderer');
  if (isObj(legacy)) return fromLegacyRenderer(legacy, nowMs, parentId);
  return undefined;
}

function pageItems(page: unknown): unknown[] {
  const out: unknown[] = [];
  for (const ep of [
    ...arr(at(page, 'onResponseReceivedEndpoints')),
    ...arr(at(page, 'onResponseReceivedActions')),
  ]) {
    const cmd = at(ep, 'reloadContinuationItemsCommand') ?? at(ep, 'appendContinuationItemsAction');
    out.push(...arr(at(cmd, 'continuationItems')));
  }
  return out;
}

function parseThread(
  t: Record<string, unknown>,
  entities: Entities,
  nowMs: number,
): CommentThread | undefined {
  const comment = commentOf(t, entities, nowMs);
  if (!comment) return undefined;
  comment.isReply = false;
  delete comment.parentId;
  const repliesRenderer = at(t, 'replies', 'commentRepliesRenderer');
  const replies: Comment[] = [];
  let repliesToken: string | undefined;
  for (const sub of [...arr(at(repliesRenderer, 'subThreads')), ...arr(at(repliesRenderer, 'contents'))]) {
    const nested = at(sub, 'commentThreadRenderer') ?? sub;
    const reply = commentOf(nested, entities, nowMs, comment.id);
    if (reply) replies.push(reply);
    const cont = at(sub, 'continuationItemRenderer');
    if (cont) repliesToken = continuationToken(cont) ?? repliesToken;
  }
  const key = str(at(t, 'commentViewModel', 'commentViewModel', 'commentKey'));
  const announced = parseCount(
    str(at(entities.get(key ?? ''), 'commentEntityPayload', 'toolbar', 'replyCount')) ?? '',
  );
  const replyCount = Math.max(announced ?? 0, replies.length);
  return { comment, replies, replyCount, ...(repliesToken ? { repliesToken } : {}) };
}

export function parseCommentsPage(page: unknown, nowMs: number, parentId?: string): CommentsPage {
  const entities = entityMap(page);
  const threads: CommentThread[] = [];
  const replies: Comment[] = [];
  let nextToken: string | undefined;
  let totalCount: number | undefined;
  let newestToken: string | undefined;
  for (const item of pageItems(page)) {
    if (!isObj(item)) continue;
    const thread = at(item, 'commentThreadRenderer');
    if (isObj(thread)) {
      const parsed = parseThread(thread, entities, nowMs);
      if (parsed) threads.push(parsed);
      continue;
    }
    if (isObj(item.commentViewModel) || isObj(item.commentRenderer)) {
      const c = commentOf(item, entities, nowMs, parentId);
      if (c) replies.push(c);
      continue;
    }
    if (isObj(item.continuationItemRenderer)) {
      nextToken = continuationToken(item.continuationItemRenderer) ?? nextToken;
      continue;
    }
    const header = at(item, 'commentsHeaderRenderer');
    if (isObj(header)) {
      totalCount = parseCount(text(header.countText) ?? text(header.commentsCount));
      const sortItems = arr(at(header, 'sortMenu', 'sortFilterSubMenuRenderer', 'subMenuItems'));
      newestToken = continuationToken(at(sortItems[1], 'serviceEndpoint'));
    }
  }
  if (totalCount === undefined) {
    const h = findAll(page, 'commentsHeaderRenderer', 1)[0];
    if (h) totalCount = parseCount(text(at(h, 'countText')));
  }
  return {
    threads,
    replies,
    ...(nextToken ? { nextToken } : {}),
    ...(totalCount !== undefined ? { totalCount } : {}),
    ...(newestToken ? { newestToken } : {}),
  };
}

import { parseCount } from './counts.ts';
import { arr, at, continuationToken, findAll, findFirst, isObj, str, text } from './json.ts';

/** Pure functions over `/youtubei/v1/browse` responses for a playlist (first page and continuations). */

export interface PlaylistPage {
  /** The platform says the playlist does not exist / is unviewable (alerts[].alertRenderer.type ERROR). */
  error?: string;
  title?: string;
  uploader?: string;
  totalVideos?: number;
  videoIds: string[];
  nextToken?: string;
}

function alertError(page: unknown): string | undefined {
  for (const a of arr(at(page, 'alerts'))) {
    const r = at(a, 'alertRenderer') ?? at(a, 'alertWithButtonRenderer');
    if (str(at(r, 'type')) === 'ERROR') return text(at(r, 'text')) ?? 'playlist unavailable';
  }
  return undefined;
}

/** A video id from any of the item shapes: classic, lockup (2026), Shorts lockup, reel item. */
function itemVideoId(item: unknown): string | undefined {
  const node = at(item, 'richItemRenderer', 'content') ?? item;
  const classic =
    at(node, 'playlistVideoRenderer') ??
    at(node, 'playlistPanelVideoRenderer') ??
    at(node, 'gridVideoRenderer');
  if (isObj(classic)) return str(classic.videoId);
  const lockup = at(node, 'lockupViewModel');
  if (isObj(lockup)) {
    const type = str(lockup.contentType);
    return type === undefined || type === 'LOCKUP_CONTENT_TYPE_VIDEO' ? str(lockup.contentId) : undefined;
  }
  const shorts = at(node, 'shortsLockupViewModel');
  if (isObj(shorts)) {
    const fromTap = str(at(findFirst(shorts.onTap, 'reelWatchEndpoint'), 'videoId'));
    return fromTap ?? str(shorts.entityId)?.replace(/^shorts-shelf-item-/, '');
  }
  const reel = at(node, 'reelItemRenderer');
  if (isObj(reel)) return str(reel.videoId);
  return undefined;
}

function itemToken(item: unknown): string | undefined {
  const r = at(item, 'continuationItemRenderer');
  if (isObj(r)) return continuationToken(r);
  const vm = at(item, 'continuationItemViewModel');
  if (isObj(vm)) return continuationToken(vm);
  return undefined;
}

/** The item lists of a page; section-level continuations (other shelves) are not video lists. */
function itemLists(page: unknown): unknown[][] {
  const lists: unknown[][] = [];
  for (const r of findAll(at(page, 'contents'), 'playlistVideoListRenderer'))
    lists.push(arr(at(r, 'contents')));
  if (lists.length === 0)
    for (const r of findAll(at(page, 'contents'), 'richGridRenderer')) lists.push(arr(at(r, 'contents')));
  if (lists.length === 0) {
    // 2026 flat first page: sectionListRenderer.contents[].itemSectionRenderer.contents[] holds the
    // lockupViewModel items and a continuationItemViewModel, with no playlistVideoListRenderer wrapper
    for (const section of findAll(at(page, 'contents'), 'sectionListRenderer', 1)) {
      for (const c of arr(at(section, 'contents'))) {
        const items = arr(at(c, 'itemSectionRenderer', 'contents'));
        if (items.some((i) => itemVideoId(i) !== undefined)) lists.push(items);
      }
    }
  }
  for (const ep of [
    ...arr(at(page, 'onResponseReceivedActions')),
    ...arr(at(page, 'onResponseReceivedEndpoints')),
  ]) {
    const cmd = at(ep, 'appendContinuationItemsAction') ?? at(ep, 'reloadContinuationItemsCommand');
    lists.push(arr(at(cmd, 'continuationItems')));
  }
  const legacy = at(page, 'continuationContents', 'playlistVideoListContinuation');
  if (isObj(legacy)) {
    lists.push(arr(legacy.contents));
    const t = str(at(legacy, 'continuations', 0, 'nextContinuationData', 'continuation'));
    if (t)
      lists.push([
        { continuationItemRenderer: { continuationEndpoint: { continuationCommand: { token: t } } } },
      ]);
  }
  return lists;
}

function header(page: unknown): { title?: string; uploader?: string; totalVideos?: number } {
  const meta = text(at(page, 'metadata', 'playlistMetadataRenderer', 'title'));
  const classic = at(page, 'header', 'playlistHeaderRenderer');
  const pageHeader = at(page, 'header', 'pageHeaderRenderer');
  const vm = at(pageHeader, 'content', 'pageHeaderViewModel');
  const sidebarStats = arr(
    findFirst(at(page, 'sidebar'), 'playlistSidebarPrimaryInfoRenderer') &&
      at(findFirst(at(page, 'sidebar'), 'playlistSidebarPrimaryInfoRenderer'), 'stats'),
  );
  const title =
    meta ??
    text(at(classic, 'title')) ??
    str(at(pageHeader, 'pageTitle')) ??
    text(at(vm, 'title', 'dynamicTextViewModel', 'text'));

  let uploader = text(at(classic, 'ownerText'));
  const rowTexts: string[] = [];
  for (const row of arr(at(vm, 'metadata', 'contentMetadataViewModel', 'metadataRows'))) {
    for (const part of arr(at(row, 'metadataParts'))) {
      const t = text(at(part, 'text')) ?? text(at(part, 'avatarStack', 'avatarStackViewModel', 'text'));
      if (t) rowTexts.push(t);
    }
  }
  if (!uploader) {
    const by = rowTexts.find((t) => /^by /i.test(t));
    if (by) uploader = by.replace(/^by /i, '').replace(/ and \d+ others?$/i, '');
  }
  if (!uploader) {
    const owner = findFirst(at(page, 'sidebar'), 'videoOwnerRenderer');
    uploader = text(at(owner, 'title'));
  }
  const countText =
    (sidebarStats[0] !== undefined ? text(sidebarStats[0]) : undefined) ??
    text(at(classic, 'numVideosText')) ??
    rowTexts.find((t) => /\bvideos?\b/i.test(t));
  const totalVideos = countText ? parseCount(countText) : undefined;
  return {
    ...(title !== undefined ? { title } : {}),
    ...(uploader !== undefined ? { uploader } : {}),
    ...(totalVideos !== undefined ? { totalVideos } : {}),
  };
}

export function parsePlaylistPage(page: unknown): PlaylistPage {
  const error = alertError(page);
  if (error) return { error, videoIds: [] };
  const videoIds: string[] = [];
  let nextToken: string | undefined;
  for (const list of itemLists(page)) {
    for (const item of list) {
      const id = itemVideoId(item);
      if (id) videoIds.push(id);
      else nextToken = itemToken(item) ?? nextToken;
    }
  }
  return { ...header(page), videoIds, ...(nextToken ? { nextToken } : {}) };
}

import type { Chapter } from '../types.ts';
import { parseCount } from './counts.ts';
import { arr, at, continuationToken, findAll, findFirst, isObj, str, text } from './json.ts';

/** Pure functions over a raw watch-next (`/youtubei/v1/next` with a videoId) response. */

export function parseLikeCount(next: unknown): number | undefined {
  for (const vm of findAll(next, 'likeButtonViewModel')) {
    const button = findFirst(vm, 'buttonViewModel');
    const a11y = str(at(button, 'accessibilityText'));
    const fromA11y = a11y && /\d/.test(a11y) ? parseCount(a11y) : undefined;
    if (fromA11y !== undefined) return fromA11y;
    const title = str(at(button, 'title'));
    if (title && /\d/.test(title)) return parseCount(title);
  }
  // pre-2023 layout
  for (const t of findAll(next, 'toggleButtonRenderer')) {
    const label = str(at(t, 'defaultText', 'accessibility', 'accessibilityData', 'label'));
    const m = label ? /([\d,.]+\s*[KMB]?)\s*like/i.exec(label) : null;
    if (m) return parseCount(m[1]);
  }
  return undefined;
}

function watchSections(next: unknown): unknown[] {
  return arr(at(next, 'contents', 'twoColumnWatchNextResults', 'results', 'results', 'contents'));
}

function commentItemSection(next: unknown): unknown {
  return watchSections(next)
    .map((s) => at(s, 'itemSectionRenderer'))
    .find(
      (s) =>
        str(at(s, 'sectionIdentifier')) === 'comment-item-section' ||
        str(at(s, 'targetId')) === 'comments-section',
    );
}

function commentsPanel(next: unknown): unknown {
  return arr(at(next, 'engagementPanels'))
    .map((p) => at(p, 'engagementPanelSectionListRenderer'))
    .find((p) =>
      ['engagement-panel-comments-section', 'comment-item-section'].includes(
        str(at(p, 'panelIdentifier')) ?? '',
      ),
    );
}

export function parseCommentCount(next: unknown): number | undefined {
  const entry = findFirst(next, 'commentsEntryPointHeaderRenderer');
  const fromEntry = text(at(entry, 'commentCount'));
  if (fromEntry) return parseCount(fromEntry);
  const ctx = text(at(commentsPanel(next), 'header', 'engagementPanelTitleHeaderRenderer', 'contextualInfo'));
  if (ctx) return parseCount(ctx);
  return undefined;
}

export interface CommentsEntry {
  disabled: boolean;
  /** Watch-next carries no entry at all (no section token, no panel, no message): build the token locally. */
  missing?: boolean;
  topToken?: string;
  newestToken?: string;
  count?: number;
}

/**
 * Where the comments start. Only the explicit "Comments are turned off" message inside the watch page's
 * comment-item-section means disabled (the same string also appears in every comments page, so the string
 * elsewhere proves nothing, and a missing panel alone proves nothing either since Aug 2026).
 */
export function parseCommentsEntry(next: unknown): CommentsEntry {
  const section = commentItemSection(next);
  const panel = commentsPanel(next);
  const items = arr(at(section, 'contents'));
  const sectionToken = items.map((i) => continuationToken(at(i, 'continuationItemRenderer'))).find(Boolean);
  const turnedOff = items.some((i) => {
    const m = at(i, 'messageRenderer');
    return isObj(m) && /turned off|disabled/i.test(text(at(m, 'text')) ?? JSON.stringify(m));
  });
  const sortItems = arr(
    at(
      panel,
      'header',
      'engagementPanelTitleHeaderRenderer',
      'menu',
      'sortFilterSubMenuRenderer',
      'subMenuItems',
    ),
  );
  const topToken = sectionToken ?? continuationToken(at(sortItems[0], 'serviceEndpoint'));
  const newestToken = continuationToken(at(sortItems[1], 'serviceEndpoint'));
  const count = parseCommentCount(next);
  // a live stream has a chat instead of comments: that too is the platform saying so explicitly
  const liveChat = isObj(
    at(next, 'contents', 'twoColumnWatchNextResults', 'conversationBar', 'liveChatRenderer'),
  );
  if (!topToken && (turnedOff || liveChat)) return { disabled: true, count: 0 };
  return {
    disabled: false,
    ...(!topToken ? { missing: true } : {}),
    ...(topToken ? { topToken } : {}),
    ...(newestToken ? { newestToken } : {}),
    ...(count !== undefined ? { count } : {}),
  };
}

function parseClock(s: string | undefined): number | undefined {
  if (!s) return undefined;
  const m = /^(?:(\d+):)?(\d{1,2}):(\d{2})$/.exec(s.trim());
  if (!m) return undefined;
  return Number(m[1] ?? 0) * 3600 + Number(m[2]) * 60 + Number(m[3]);
}

function cleanChapters(list: Chapter[], duration: number | undefined): Chapter[] {
  const out: Chapter[] = [];
  for (const c of list) {
    if (!c.title) continue;
    if (duration !== undefined && duration > 0 && c.startTime > duration) continue;
    const prev = out[out.length - 1];
    if (prev && c.startTime <= prev.startTime) continue;
    out.push({ title: c.title, startTime: Math.round(c.startTime * 1000) / 1000 });
  }
  return out;
}

/** Chapters: the player bar first (what the viewer sees), then the description/auto chapter panels. */
export function parseChapters(next: unknown, duration?: number): Chapter[] {
  const bar =
    findFirst(at(next, 'playerOverlays'), 'chapteredPlayerBarRenderer') ??
    findFirst(at(next, 'playerOverlays'), 'multiMarkersPlayerBarRenderer');
  const fromBar = findAll(bar, 'chapterRenderer').map((c) => ({
    title: text(at(c, 'title')) ?? '',
    startTime: (Number(at(c, 'timeRangeStartMillis')) || 0) / 1000,
  }));
  if (fromBar.length > 0) return cleanChapters(fromBar, duration);
  const panels = arr(at(next, 'engagementPanels')).map((p) => at(p, 'engagementPanelSectionListRenderer'));
  for (const id of [
    'engagement-panel-macro-markers-description-chapters',
    'engagement-panel-macro-markers-auto-chapters',
  ]) {
    const panel = panels.find((p) => str(at(p, 'panelIdentifier')) === id);
    if (!panel) continue;
    const items = findAll(panel, 'macroMarkersListItemRenderer').map((m) => ({
      title: text(at(m, 'title')) ?? '',
      startTime:
        (typeof at(m, 'onTap', 'watchEndpoint', 'startTimeSeconds') === 'number'
          ? (at(m, 'onTap', 'watchEndpoint', 'startTimeSeconds') as number)
          : parseClock(text(at(m, 'timeDescription')))) ?? -1,
    }));
    const valid = items.filter((c) => c.startTime >= 0);
    if (valid.length > 0) return cleanChapters(valid, duration);
  }
  return [];
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** Last-resort upload date from `dateText` ("Oct 14, 2019", "Premiered Oct 14, 2019", "Streamed live on 2 Mar 2020"). */
export function parseDateText(next: unknown): string {
  const t = text(at(findFirst(next, 'videoPrimaryInfoRenderer'), 'dateText'));
  if (!t) return '';
  const md = /([A-Za-z]{3})[a-z]*\.? (\d{1,2}), (\d{4})/.exec(t) ?? null;
  const dm = md ? null : /(\d{1,2}) ([A-Za-z]{3})[a-z]*\.? (\d{4})/.exec(t);
  const [mon, day, year] = md ? [md[1], md[2], md[3]] : dm ? [dm[2], dm[1], dm[3]] : [];
  const mi = MONTHS.indexOf((mon ?? '').toLowerCase());
  if (mi < 0 || !day || !year) return '';
  return `${year}${String(mi + 1).padStart(2, '0')}${day.padStart(2, '0')}`;
}

/** The routing table a fake starts with: the defaults, the caller's routes, and the synthetic pages. */
import { readFileSync } from 'node:fs';
import { RECORDED_CONTINUATIONS, okPlayer, playlistIds, videoIds, type RouteTable } from './routes.ts';
import { generateComments, generatePlaylist } from './synthetic.ts';

export function mergeRoutes(base: RouteTable, extra: Partial<RouteTable> | undefined): RouteTable {
  return {
    videos: { ...base.videos, ...extra?.videos },
    continuations: { ...base.continuations, ...extra?.continuations },
    playlists: { ...base.playlists, ...extra?.playlists },
  };
}

/** Adds the synthetic comments video, the synthetic playlist and the recorded continuation pages. */
export function withSyntheticAndRecorded(routes: RouteTable, dir: string): RouteTable {
  const comments = generateComments({
    videoId: videoIds.syntheticComments,
    topLevel: 45,
    perPage: 20,
    repliesEvery: 4,
    repliesPerThread: 3,
    replyPageSize: 2,
    inlineEvery: 10,
    totalText: '1.2K',
  });
  routes.videos[videoIds.syntheticComments] ??= {
    player: okPlayer(videoIds.syntheticComments, 'synthetic comments'),
    next: { inline: comments.next },
    comments: { inline: comments.pages.get(comments.topToken) },
    note: 'synthetic comments: 3 pages, replies behind continuations (2 per page) and inline subThreads',
  };
  for (const [token, page] of comments.pages) routes.continuations[token] ??= { inline: page };
  const hidden = generateComments({
    videoId: videoIds.commentsNoPanel,
    topLevel: 25,
    perPage: 20,
    repliesEvery: 5,
    repliesPerThread: 2,
    replyPageSize: 2,
    totalText: '31',
  });
  routes.videos[videoIds.commentsNoPanel] ??= {
    player: okPlayer(videoIds.commentsNoPanel, 'synthetic comments without a panel'),
    next: { inline: withoutCommentsEntry(hidden.next) },
    comments: { inline: hidden.pages.get(hidden.topToken) },
    note: 'SYNTHETIC: watch-next without any comments entry (no section, no panel, no "turned off" message) while 25 comments exist: only the locally built comments continuation reaches them',
  };
  for (const [token, page] of hidden.pages) routes.continuations[token] ??= { inline: page };
  const pl = generatePlaylist({ playlistId: playlistIds.synthetic, videos: 250 });
  routes.playlists[playlistIds.synthetic] ??= { inline: pl.first };
  for (const [token, page] of pl.pages) routes.continuations[token] ??= { inline: page };
  for (const file of RECORDED_CONTINUATIONS) {
    const mock = JSON.parse(readFileSync(dir + file, 'utf8')) as { request: { dataToSend?: number[] } };
    const body = JSON.parse(Buffer.from(mock.request.dataToSend ?? []).toString('utf8')) as {
      continuation?: string;
    };
    if (body.continuation) routes.continuations[body.continuation] ??= { file };
  }
  return routes;
}

/** A watch-next without the comment-item-section and the comments engagement panel. */
function withoutCommentsEntry(next: unknown): unknown {
  const copy = structuredClone(next) as {
    _synthetic?: string;
    contents: { twoColumnWatchNextResults: { results: { results: { contents: unknown[] } } } };
    engagementPanels?: unknown[];
  };
  const results = copy.contents.twoColumnWatchNextResults.results.results;
  results.contents = results.contents.filter(
    (c) =>
      (c as { itemSectionRenderer?: { sectionIdentifier?: string } }).itemSectionRenderer
        ?.sectionIdentifier !== 'comment-item-section',
  );
  delete copy.engagementPanels;
  copy._synthetic = 'SYNTHETIC watch-next without any comments entry';
  return copy;
}

// The fake in today mode: playlist first pages and continuations, comments without a panel.
import { describe, expect, it } from 'vitest';
import {
  buildCommentsContinuation,
  buildPlaylistContinuation,
  loadFixture,
  parseCommentsContinuation,
  parsePlaylistContinuation,
  playlistIds,
  videoIds,
} from '@subx/testing/fake-youtube';
import {
  type Json,
  RECORDED_COMMENTS_TOKEN,
  RECORDED_PLAYLIST_TOKEN,
  context,
  fake,
  post,
  useFakeYouTube,
} from './fake-youtube-support.ts';

useFakeYouTube();

const items = (json: Json): Json[] =>
  json.contents.twoColumnBrowseResultsRenderer.tabs[0].tabRenderer.content.sectionListRenderer.contents[0]
    .itemSectionRenderer.contents;

/** Video ids of a recorded classic first page, in order. */
function recordedIds(file: string): string[] {
  const page = JSON.parse(loadFixture({ file }).body) as Json;
  return (items(page)[0]?.playlistVideoListRenderer.contents as Json[])
    .filter((i) => i.playlistVideoRenderer)
    .map((i) => i.playlistVideoRenderer.videoId as string);
}

describe('today: playlists', () => {
  it('builds the recorded NewPipe playlist token byte for byte and decodes it', () => {
    expect(buildPlaylistContinuation(playlistIds.classic)).toBe(RECORDED_PLAYLIST_TOKEN);
    expect(parsePlaylistContinuation(RECORDED_PLAYLIST_TOKEN)).toEqual({
      playlistId: playlistIds.classic,
      start: 0,
    });
    expect(parsePlaylistContinuation(buildPlaylistContinuation('PLx', 200))).toEqual({
      playlistId: 'PLx',
      start: 200,
    });
    expect(parsePlaylistContinuation(RECORDED_COMMENTS_TOKEN)).toBeUndefined();
    expect(parsePlaylistContinuation('not a token!')).toBeUndefined();
  });

  it('header-only first answer, then the built continuation answers the 49 videos in order', async () => {
    const first = (await post('browse', { context: context('WEB'), browseId: `VL${playlistIds.classic}` }))
      .json;
    expect(first.header).toBeDefined();
    expect(first.microformat).toBeDefined();
    expect(first).not.toHaveProperty('contents');
    expect(JSON.stringify(first)).not.toMatch(/continuationItem|playlistVideoRenderer/);
    const page = (
      await post('browse', {
        context: context('WEB'),
        continuation: buildPlaylistContinuation(playlistIds.classic),
      })
    ).json;
    const got = page.onResponseReceivedActions[0].reloadContinuationItemsCommand.continuationItems
      .filter((i: Json) => i.playlistVideoRenderer)
      .map((i: Json) => i.playlistVideoRenderer.videoId);
    expect(got).toEqual(recordedIds('newpipe/62b3c3b/playlist/learning/generated_mock_2.json'));
  });

  it('a playlist made header-only decodes its built token (no lookup) into the items page', async () => {
    fake.setPlaylistShape(playlistIds.small, 'headerOnly');
    try {
      const token = buildPlaylistContinuation(playlistIds.small);
      expect(Object.keys(fake.routes.continuations)).not.toContain(token);
      const page = (await post('browse', { context: context('WEB'), continuation: token })).json;
      const cmd = page.onResponseReceivedActions[0].reloadContinuationItemsCommand;
      expect(cmd.targetId).toBe(playlistIds.small);
      expect(cmd.continuationItems.map((i: Json) => i.playlistVideoRenderer.videoId)).toEqual(
        recordedIds('newpipe/62b3c3b/playlist/continuations/generated_mock_4.json'),
      );
      const later = (
        await post('browse', {
          context: context('WEB'),
          continuation: buildPlaylistContinuation(playlistIds.small, 10),
        })
      ).json;
      expect(
        later.onResponseReceivedActions[0].reloadContinuationItemsCommand.continuationItems,
      ).toHaveLength(7);
    } finally {
      fake.setPlaylistShape(playlistIds.small, 'flat');
    }
  });

  it('flat first page: lockupViewModel items straight in itemSectionRenderer, in playlist order', async () => {
    const { json } = await post('browse', { context: context('WEB'), browseId: `VL${playlistIds.small}` });
    const list = items(json);
    expect(JSON.stringify(json)).not.toContain('playlistVideoListRenderer');
    expect(list.map((i) => i.lockupViewModel.contentId)).toEqual(
      recordedIds('newpipe/62b3c3b/playlist/continuations/generated_mock_4.json'),
    );
    const meta = list[0]?.lockupViewModel.metadata.lockupMetadataViewModel;
    expect(meta.title.content).toBeTruthy();
    expect(meta.metadata.contentMetadataViewModel.metadataRows[0].metadataParts[0].text.content).toBe(
      'Audio Lounge Music',
    );
    expect(JSON.stringify(json.header)).toMatch(/17 videos/);
  });

  it('the synthetic 250 is flat with continuationItemViewModel, then pages in the old shape', async () => {
    const first = (await post('browse', { context: context('WEB'), browseId: `VL${playlistIds.synthetic}` }))
      .json;
    const list = items(first);
    const ids = list.filter((i) => i.lockupViewModel).map((i) => i.lockupViewModel.contentId as string);
    let token: string | undefined =
      list.at(-1)?.continuationItemViewModel.continuationCommand.innertubeCommand.continuationCommand.token;
    while (token) {
      const page = (await post('browse', { context: context('WEB'), continuation: token })).json;
      const more = page.onResponseReceivedActions[0].appendContinuationItemsAction
        .continuationItems as Json[];
      ids.push(...more.filter((i) => i.lockupViewModel).map((i) => i.lockupViewModel.contentId as string));
      token = more.at(-1)?.continuationItemRenderer?.continuationEndpoint.continuationCommand.token;
    }
    expect(ids).toEqual(Array.from({ length: 250 }, (_, i) => `synthv${String(i + 1).padStart(5, '0')}`));
  });

  it('Shorts stay as recorded; replay keeps the classic first pages', async () => {
    const today = await post('browse', { context: context('WEB'), browseId: `VL${playlistIds.shorts}` });
    fake.setMode('replay');
    const replay = await post('browse', { context: context('WEB'), browseId: `VL${playlistIds.shorts}` });
    // the same page, but today names a fresh visitor for a caller that sent none, as the platform does
    const { responseContext: todayContext, ...todayRest } = today.json as {
      responseContext: { visitorData?: string };
    };
    const { responseContext: replayContext, ...replayRest } = replay.json as {
      responseContext: { visitorData?: string };
    };
    expect(todayRest).toEqual(replayRest);
    expect(todayContext.visitorData).not.toBe(replayContext.visitorData);
    expect(fake.visitorDataIssued).toContain(todayContext.visitorData);
    const classic = await fetch(`${fake.url}/youtubei/v1/browse`, {
      method: 'POST',
      body: JSON.stringify({ context: context('WEB'), browseId: `VL${playlistIds.classic}` }),
    });
    expect(await classic.text()).toBe(
      loadFixture({ file: 'newpipe/62b3c3b/playlist/learning/generated_mock_2.json' }).body,
    );
  });
});

describe('comments without a panel', () => {
  it('builds the recorded NewPipe comments token byte for byte; parsing reads the id', () => {
    expect(buildCommentsContinuation(videoIds.comments)).toBe(RECORDED_COMMENTS_TOKEN);
    expect(parseCommentsContinuation(RECORDED_COMMENTS_TOKEN)).toBe(videoIds.comments);
    expect(parseCommentsContinuation(buildCommentsContinuation(videoIds.commentsNoPanel))).toBe(
      videoIds.commentsNoPanel,
    );
    expect(parseCommentsContinuation(RECORDED_PLAYLIST_TOKEN)).toBeUndefined();
  });

  it('watch-next has no comments entry, yet the locally built continuation answers the comments', async () => {
    const next = (await post('next', { context: context('WEB'), videoId: videoIds.commentsNoPanel })).json;
    const text = JSON.stringify(next);
    expect(text).not.toMatch(
      /comment-item-section|engagement-panel-comments-section|turned off|continuationItem/,
    );
    const first = (
      await post('next', {
        context: context('WEB'),
        continuation: buildCommentsContinuation(videoIds.commentsNoPanel),
      })
    ).json;
    const body = first.onResponseReceivedEndpoints[1].reloadContinuationItemsCommand
      .continuationItems as Json[];
    expect(body.filter((i) => i.commentThreadRenderer)).toHaveLength(20);
    const token = body.at(-1)?.continuationItemRenderer.continuationEndpoint.continuationCommand
      .token as string;
    const second = (await post('next', { context: context('WEB'), continuation: token })).json;
    const more = second.onResponseReceivedEndpoints[0].appendContinuationItemsAction
      .continuationItems as Json[];
    expect(more.filter((i) => i.commentThreadRenderer)).toHaveLength(5);
  });

  it('an unknown built token is still INVALID_ARGUMENT', async () => {
    const res = await post('next', {
      context: context('WEB'),
      continuation: buildCommentsContinuation('zzzzzzzzzzz'),
    });
    expect(res.status).toBe(400);
  });
});

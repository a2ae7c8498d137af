import { loadFixture, type FixtureRef } from '@subx/testing/fake-youtube';
import { describe, expect, it } from 'vitest';
import { parseCommentsPage } from './comments.ts';
import { parseCommentsEntry, parseLikeCount } from './next.ts';
import { classifyPlayability, parseCaptionTracks, parsePlayerMetadata, toUploadDate } from './player.ts';
import { parsePlaylistPage } from './playlist.ts';

/** Pure parsers over the recorded responses (no server): what each fixture proves. */
const json = (ref: FixtureRef): unknown => JSON.parse(loadFixture(ref).body);
const NP = 'newpipe/43f8e6e/';
const NOW = Date.UTC(2026, 0, 26, 18, 0, 0);

describe('classifyPlayability over every recorded error shape', () => {
  it.each([
    [
      'youtube-transcript-api/85c8594/youtube_age_restricted.innertube.json.static',
      'Njp5uhTorCo',
      'VIDEO_UNAVAILABLE',
      'age_restricted',
    ],
    // requests send hl=en; a localized reason is not understood and stays the non-definitive 'unplayable'
    // localized reason: the age gate is recognised by desktopLegacyAgeGateReason, not by the words
    ['node-ytdl-core/age-restricted-vi-VN/watch.html', 'CsrfovOPcjk', 'VIDEO_UNAVAILABLE', 'age_restricted'],
    ['node-ytdl-core/age-restricted/watch.html', 'LuZu9N53Vd0', 'VIDEO_UNAVAILABLE', 'age_restricted'],
    [
      'youtube-transcript-api/85c8594/youtube_video_unavailable.innertube.json.static',
      'xxxxxxxxxxx',
      'VIDEO_NOT_FOUND',
      undefined,
    ],
    [
      'newpipe/9730de2/stream/notAvailable/generated_mock_15.json',
      '_PL2HJKxnOM',
      'VIDEO_UNAVAILABLE',
      'geo_blocked',
    ],
    [
      'newpipe/727e791/stream/ageRestricted/generated_mock_5.json',
      'rwcfPqbAx-0',
      'VIDEO_UNAVAILABLE',
      'unplayable',
    ],
    [
      `${NP}stream/youtubestreamextractordefault/ratingsdisabled/generated_mock_3.json`,
      'it3OtbTxQk0',
      'VIDEO_UNAVAILABLE',
      'unplayable',
    ],
    [
      'youtube-transcript-api/85c8594/youtube_request_blocked.innertube.json.static',
      'xxxxxxxxxxx',
      'UPSTREAM_BLOCKED',
      'bot_check',
    ],
  ])('%s → %s %s', (file, id, code, reason) => {
    const pick = file.endsWith('.html') ? 'ytInitialPlayerResponse' : undefined;
    const v = classifyPlayability(json({ file, ...(pick ? { pick } : {}) }), id);
    expect(v.ok).toBe(false);
    if (!v.ok) {
      expect(v.error.code).toBe(code);
      expect(v.error.reason).toBe(reason);
    }
  });

  it('client-specific failures are not definitive (another client may serve the video)', () => {
    const v = classifyPlayability(
      json({ file: `${NP}stream/youtubestreamextractordefault/ratingsdisabled/generated_mock_3.json` }),
      'it3OtbTxQk0',
    );
    expect(v.ok === false && v.definitive).toBe(false);
    const p = classifyPlayability(
      json({ file: 'newpipe/9730de2/stream/notAvailable/generated_mock_10.json' }),
      '8VajtrESJzA',
    );
    expect(p.ok === false && p.definitive).toBe(true);
  });

  it('the OK TV-embedded answer of 2024 is playable', () => {
    expect(
      classifyPlayability(
        json({ file: 'newpipe/9730de2/stream/ageRestricted/generated_mock_5.json' }),
        'rwcfPqbAx-0',
      ).ok,
    ).toBe(true);
  });
});

describe('parseCaptionTracks', () => {
  it('reads kind, names in runs and simpleText, translation targets and PO-token URLs', () => {
    const android = parseCaptionTracks(
      json({ file: 'youtube-transcript-api/85c8594/youtube.innertube.json.static' }),
    );
    expect(android.tracks.map((t) => `${t.languageCode}/${t.kind}`)).toEqual([
      'zh/manual',
      'cs/manual',
      'en/manual',
      'en/asr',
      'de/manual',
      'hi/manual',
      'ja/manual',
      'ko/manual',
      'es/manual',
    ]);
    expect(android.translationLanguages).toHaveLength(18);
    expect(android.tracks.some((t) => t.requiresPoToken)).toBe(false);
    const po = parseCaptionTracks(
      json({ file: 'youtube-transcript-api/85c8594/youtube_po_token_required.innertube.json.static' }),
    );
    // the hand-edited asset marks only the manual English track
    expect(po.tracks.filter((t) => t.requiresPoToken).map((t) => `${t.languageCode}/${t.kind}`)).toEqual([
      'en/manual',
    ]);
    const named = parseCaptionTracks(
      json({ file: 'newpipe/9730de2/stream/generatedSubtitles/generated_mock_4.json' }),
    );
    expect(named.tracks.map((t) => [t.vssId, t.name])).toEqual([
      ['a.de', 'German (auto-generated)'],
      ['.de.IEiJcQzJ7go', 'German - Untertitel (06.05.2024 10:16)'],
    ]);
  });

  it('a track list without translationLanguages leaves translation untested', () => {
    const html = json({
      file: 'youtube-transcript-api/7a1c61b/youtube_no_translation_languages.html.static',
      pick: 'ytInitialPlayerResponse',
    });
    const list = parseCaptionTracks(html);
    expect(list.tracks.map((t) => `${t.languageCode}/${t.kind}`)).toEqual(['ar/asr']);
    expect(list.translationLanguages).toBeUndefined();
  });
});

describe('metadata from player responses', () => {
  it('converts upload dates with an offset to UTC', () => {
    expect(toUploadDate('2019-10-14T07:00:16-07:00')).toBe('20191014');
    expect(toUploadDate('2024-05-06T22:00:00-07:00')).toBe('20240507');
    expect(toUploadDate('2024-05-06T01:30:00+02:00')).toBe('20240505');
    expect(toUploadDate('2012-10-09')).toBe('20121009');
    expect(toUploadDate(undefined)).toBe('');
  });

  it('takes microformat from a WEB answer when the primary (mobile) answer has none', () => {
    const mobile = json({ file: `${NP}stream/youtubestreamextractorcollaborators/generated_mock_3.json` });
    const masked = json({ file: `${NP}stream/youtubestreamextractorcollaborators/generated_mock_7.json` });
    expect(parsePlayerMetadata('3sbYbckT1VY', mobile).uploadDate).toBe('');
    const m = parsePlayerMetadata('3sbYbckT1VY', mobile, masked);
    expect(m).toMatchObject({
      title: 'Engineers vs Pumpkin Carving 2.0',
      channel: 'CrunchLabs',
      uploadDate: '20251025',
      categories: ['Science & Technology'],
      duration: 696,
    });
  });
});

describe('watch-next', () => {
  it('reads the like count of the 2026 view model and the comments entry', () => {
    const next = json({
      file: `${NP}stream/youtubestreamextractordefault/audiotracktypes/generated_mock_8.json`,
    });
    expect(parseLikeCount(next)).toBe(77322);
    const entry = parseCommentsEntry(next);
    expect(entry.disabled).toBe(false);
    expect(entry.topToken).toBeTruthy();
  });

  it('recognises disabled comments in the 2024 and 2026 layouts and live chat', () => {
    for (const file of [
      `${NP}stream/youtubestreamextractordefault/cclicensed/generated_mock_8.json`,
      'newpipe/9730de2/stream/ratingsDisabled/generated_mock_5.json',
      `${NP}stream/youtubestreamextractorlivestream/generated_mock_8.json`,
    ]) {
      expect(parseCommentsEntry(json({ file })).disabled).toBe(true);
    }
  });

  it('finds the comments token and the newest-first token of the sort menu', () => {
    const entry = parseCommentsEntry(
      json({ file: `${NP}youtubecommentsextractor/replies/generated_mock_2.json` }),
    );
    expect(entry.topToken).toBe(
      'Eg0SC3hhUUpib3pZX0lzGAYyJSIRIgt4YVFKYm96WV9JczAAeAJCEGNvbW1lbnRzLXNlY3Rpb24%3D',
    );
    expect(entry.newestToken).toMatch(/^Eg0SC3hhUUpib3pZX0lzGAYyOCIRIgt4YVFKYm96WV9JczAB/);
  });
});

describe('comment pages', () => {
  it('joins threads with their entity payloads; pinned first; next page token', () => {
    const page = parseCommentsPage(
      json({ file: `${NP}youtubecommentsextractor/replies/generated_mock_3.json` }),
      NOW,
    );
    expect(page.threads).toHaveLength(20);
    expect(page.totalCount).toBe(21051);
    expect(page.nextToken).toBeTruthy();
    expect(page.threads.filter((t) => t.repliesToken).length).toBe(18);
    expect(page.threads[0]?.replyCount).toBe(327);
    expect(
      page.threads.every(
        (t) => t.comment.author.startsWith('@') && t.comment.text.length > 0 && !t.comment.isReply,
      ),
    ).toBe(true);
  });

  it('reads a replies page with its "show more replies" token', () => {
    const page = parseCommentsPage(
      json({ file: `${NP}youtubecommentsextractor/replies/generated_mock_4.json` }),
      NOW,
      'UgwSOM0QHBLysE3vZE54AaABAg',
    );
    expect(page.replies).toHaveLength(10);
    expect(page.replies.every((r) => r.isReply && r.parentId === 'UgwSOM0QHBLysE3vZE54AaABAg')).toBe(true);
    expect(page.nextToken).toBeTruthy();
  });

  it('a last page has no next token; localized counts still parse', () => {
    const last = parseCommentsPage(
      json({ file: `${NP}youtubecommentsextractor/thomas/generated_mock_3.json` }),
      NOW,
    );
    expect(last.threads.length).toBeGreaterThan(0);
    expect(last.nextToken).toBeUndefined();
    const de = parseCommentsPage(
      json({ file: `${NP}youtubecommentsextractor/localizedvotecount/generated_mock_3.json` }),
      NOW,
    );
    expect(de.totalCount).toBe(19783);
  });

  it('reads the creator-reply and pinned pages without unknown-node failures', () => {
    for (const f of ['creatorreply', 'pinned', 'formatting']) {
      const page = parseCommentsPage(
        json({ file: `${NP}youtubecommentsextractor/${f}/generated_mock_3.json` }),
        NOW,
      );
      expect(page.threads.length).toBeGreaterThan(5);
      expect(page.threads.every((t) => t.comment.id.length > 10)).toBe(true);
    }
  });
});

describe('playlist pages', () => {
  it('a continuation page of a huge playlist: 100 ids and the next token', () => {
    const page = parsePlaylistPage(
      json({ file: `${NP}youtubeplaylistextractor/hugeplaylist/generated_mock_3.json` }),
    );
    expect(page.videoIds).toHaveLength(100);
    expect(page.nextToken).toMatch(/^4qmFsg/);
    expect(page.totalVideos).toBe(4999);
  });

  it('the masked header-only answer gives title, uploader and count but no items', () => {
    const page = parsePlaylistPage(
      json({ file: `${NP}youtubeplaylistextractor/hugeplaylist/generated_mock_2.json` }),
    );
    expect(page.videoIds).toEqual([]);
    expect(page.totalVideos).toBe(4999);
    expect(page.title).toMatch(/^I Wanna Rock Super Gigantic Playlist 1/);
    const course = parsePlaylistPage(
      json({ file: `${NP}youtubeplaylistextractor/courseplaylist/generated_mock_2.json` }),
    );
    expect(course).toMatchObject({
      title: 'C++ Template Metaprogramming',
      uploader: 'BitsOfQ',
      totalVideos: 14,
    });
  });

  it('alerts of type ERROR mean the playlist does not exist', () => {
    expect(
      parsePlaylistPage(json({ file: `${NP}youtubeplaylistextractor/notavailable/generated_mock_3.json` }))
        .error,
    ).toBe('The playlist does not exist.');
  });
});

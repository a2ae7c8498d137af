import { readSynthetic, type FixtureRef } from './fixtures.ts';
import type { Playability, PlaylistShape } from './today.ts';

/**
 * The routing table of the fake: which recorded response answers which request. Extend it by passing
 * `routes` to startFakeYouTube (entries are merged over these). Paths are relative to packages/testing/fixtures-recorded.
 */

interface CaptionFiles {
  json3?: string;
  srv3?: string;
  srv1?: string;
}

export interface VideoRoute {
  /** /player answers by context.client.clientName; '*' answers any client without its own entry. */
  player: Record<string, FixtureRef>;
  /**
   * Today mode only: entries that replace `player` entries of the same client (the platform since late Aug
   * 2026). A non-WEB client with neither its own entry nor '*' gets the WEB entry, cleaned (see README).
   */
  todayPlayer?: Record<string, FixtureRef>;
  /** Permanent per-client playability answers (both modes), e.g. VISIONOS refusing a made-for-kids video. */
  playability?: Record<string, Playability>;
  /** The first comments page: the answer to the comments continuation a client builds from this id. */
  comments?: FixtureRef;
  /** /next with this videoId. */
  next?: FixtureRef;
  /** Masked /player (`$fields=microformat,...`) when a mobile recording lacks microformat. */
  microformat?: FixtureRef;
  /**
   * Hand-written synthetic caption bodies by track ("en" = manual, "a.en" = auto-generated), relative to
   * packages/testing/fixtures-synthetic/. Tracks without an entry get a generated body naming the track.
   */
  captions?: Record<string, CaptionFiles>;
  /** What the entry proves, for the README and for whoever extends the table. */
  note: string;
}

export interface RouteTable {
  videos: Record<string, VideoRoute>;
  /** /next and /browse continuation tokens. */
  continuations: Record<string, FixtureRef>;
  /** /browse {browseId: "VL" + id}, keyed by the playlist id. */
  playlists: Record<string, FixtureRef>;
}

const NP = 'newpipe/43f8e6e/';
const NP24 = 'newpipe/9730de2/';
const YTA = 'youtube-transcript-api/85c8594/';
const YTA_HTML = 'youtube-transcript-api/7a1c61b/';

const manualEn: CaptionFiles = {
  json3: 'captions/manual-en.json3',
  srv3: 'captions/manual-en.srv3.xml',
  srv1: 'captions/manual-en.srv1.xml',
};
const asrEn: CaptionFiles = {
  json3: 'captions/asr-en.json3',
  srv3: 'captions/asr-en.srv3.xml',
  srv1: 'captions/asr-en.srv1.xml',
};

/** Ids of the fixture cases, for tests across the project. */
export const videoIds = {
  /** manual en + asr en; WEB player with microformat + watch-next (8,205 likes, 477 comments, chapters). */
  manualAndAuto: 'F1xioXWb8CY',
  /** WEB caption URLs carry exp=xpe (PO token); the ANDROID answer's do not. */
  poTokenOnWeb: 'GJLlxj_dtq8',
  /** asr en only (WEB 2024) and comments turned off. */
  autoOnly: 'it3OtbTxQk0',
  /** asr fr only (VISIONOS 2026 recording, no microformat; the masked WEB answer carries it). */
  autoOnlyFrench: 'cJ9to6EmElQ',
  /** asr de + a named manual de track; the ANDROID answer is a different video (aQvGIIdgFDM). */
  germanNamedTrack: 'bvwohQavFV8',
  /** nine manual tracks, premiere (liveBroadcastDetails but not live content). */
  manyManual: '_cMxraX_5RE',
  /** manual en + en-GB, asr ja (VISIONOS 2026), watch-next with likes. */
  audioTracks: 'Kn56bMZ9OE8',
  /** playable, no captions object. */
  noCaptions: 'dsMFmonKDD4',
  /** no captions, empty description; WEB player + next (iv-org). */
  noDescription: 'iuevw6218F0',
  /** manual de, 8 creator chapters in watch-next (VISIONOS player). */
  chapters: 'ud9d5cMDP_0',
  /** manual + asr en (VISIONOS), comments turned off in 2026 watch-next. */
  commentsDisabled: 'M4gD1WSo5mA',
  /** live now (WEB 2024). */
  liveNow: 'jfKfPfyJRdk',
  /** was live, no captions (ANDROID). */
  wasLive: 'Fjg5lYqvzUs',
  /**
   * SYNTHETIC: a live stream that has ended and is still being processed (`isPostLiveDvr`): playable on
   * every client, no caption track yet.
   */
  postLive: 'synthPostLv',
  private: '8VajtrESJzA',
  geoBlocked: '_PL2HJKxnOM',
  membersOnly: 'ayI2iBwGdxw',
  paid: 'SyKPsFRP_Oc',
  musicPremium: 'sMJ8bRN2dak',
  ageRestricted: 'rwcfPqbAx-0',
  upcomingLive: 'N-yVic7BbY0',
  /** WEB: ERROR "Video unavailable". */
  invalid: 'INVALID_ID_',
  /** ANDROID reel endpoint answered `{}`. */
  nonexistent: 'don-t-exist',
  /** every client answers "Sign in to confirm you're not a bot". */
  botCheck: 'botCheck000',
  /** hand-edited CUSTOM playability status. */
  unplayable: 'unplayable0',
  /** SYNTHETIC: every client shows the October 2026 interstitial error screen "Sign in to confirm you're not a bot". */
  interstitialBotCheck: 'synthIstBot',
  /** SYNTHETIC: every client shows the October 2026 interstitial error screen "Sign in to confirm your age". */
  interstitialAgeGate: 'synthIstAge',
  /** recorded comments: watch-next, page 1 (20 threads, pinned), the pinned thread's first replies page. */
  comments: 'xaQJbozY_Is',
  /** synthetic comments: 45 threads over 3 pages, replies behind continuations and inline. */
  syntheticComments: 'synthCmnts1',
  /**
   * SYNTHETIC: a made-for-kids video. VISIONOS answers ERROR "This video is unavailable"; ANDROID, IOS and
   * WEB serve a copy of F1xioXWb8CY's recording rewritten to this id (manual en + asr en).
   */
  madeForKids: 'synthKids01',
  /**
   * SYNTHETIC: comments exist (25 threads over 2 pages) but watch-next has no comments entry at all (no
   * comment-item-section, no engagement panel, no "turned off" message): only a locally built comments
   * continuation reaches them.
   */
  commentsNoPanel: 'synthNoPnl1',
  /** SYNTHETIC: no captions, 70 s of spoken audio as itag 251 and 140 (audio.ts). */
  speechNoCaptions: 'synthSpeech',
  /**
   * SYNTHETIC: the same speech as a made-for-kids video (audio.ts): every client answers UNPLAYABLE
   * except IOS_PRODUCER, which lists itag 140 (mp4a) alone; no caption track.
   */
  madeForKidsAudio: 'synthKidsAu',
  /**
   * SYNTHETIC: the same spoken audio, and an English caption track whose URL needs a PO token in
   * every client's answer (audio.ts): the platform refuses the captions, the audio can be read.
   */
  speechCaptionsRefused: 'synthSpkRef',
  /**
   * SYNTHETIC: an English video whose manual tracks are translations listed before the original:
   * zh (first), en, ja, all translatable, no audio tracks; only `defaultTranslationSourceTrackIndices`
   * names the original (en). A translation must start from en, never from zh.
   */
  translationsListedFirst: 'synthZhTran',
  /** asr en only (VISIONOS 2026), unlisted and Shorts-eligible; masked WEB answer carries microformat. */
  unlistedShort: 'tjz2u2DiveM',
  /** 36 caption tracks (VISIONOS 2026); masked WEB answer carries microformat (uploadDate, category). */
  manyTracks: '3sbYbckT1VY',
  /** age-restricted as a mobile client sees it (ANDROID 2025: LOGIN_REQUIRED, desktopLegacyAgeGateReason). */
  ageRestrictedMobile: 'Njp5uhTorCo',
} as const;

export const playlistIds = {
  /** classic first page, 49 playlistVideoRenderer, pageHeaderRenderer. */
  classic: 'PL8dPuuaLjXtOAKed_MxxWBNaPno5h3Zs8',
  /** 17 videos. */
  small: 'PLXJg25X-OulsVsnvZ7RVtSDW-id9_RzAO',
  /** Shorts playlist: 100 shortsLockupViewModel items, playlistHeaderRenderer "753 videos". */
  shorts: 'UUSHBR8-60-B28hp2BmDPdntcQ',
  /** synthetic: 250 lockupViewModel videos over 3 pages (continuationItemViewModel, then continuationItemRenderer). */
  synthetic: 'PLsynthLockup250',
  notFound: 'PL11111111111111111111111111111111',
  unviewable: 'INVALID_ID',
} as const;

/**
 * Today mode: the shape of each playlist's first /browse answer (others: as recorded). classic = as
 * recorded; flat = items straight in itemSectionRenderer as lockupViewModel; headerOnly = no items and no
 * continuation (the client builds the first continuation from the playlist id).
 */
export function todayPlaylistShapes(): Record<string, PlaylistShape> {
  return {
    [playlistIds.classic]: 'headerOnly',
    [playlistIds.small]: 'flat',
    [playlistIds.synthetic]: 'flat',
  };
}

/** A minimal playable /player answer for the comments cases (no recording needed there). */
export function okPlayer(videoId: string, title: string): Record<string, FixtureRef> {
  return { '*': { inline: { playabilityStatus: { status: 'OK' }, videoDetails: { videoId, title } } } };
}

export function defaultRoutes(): RouteTable {
  const v = videoIds;
  return {
    videos: {
      [v.manualAndAuto]: {
        player: {
          WEB: { file: `${YTA_HTML}youtube_ww1_nl_en.html.static`, pick: 'ytInitialPlayerResponse' },
          '*': { file: `${YTA}youtube_ww1_nl_en.innertube.json.static` },
        },
        next: { file: `${YTA_HTML}youtube_ww1_nl_en.html.static`, pick: 'ytInitialData' },
        captions: { en: manualEn, 'a.en': asrEn },
        note: 'WEB answer lists manual+asr en and carries microformat: a transcript is 2 requests. Today: VISIONOS, ANDROID and IOS get the ANDROID recording (clean URLs); WEB lists tracks only with signatureTimestamp, gated by exp=xpe',
      },
      [v.poTokenOnWeb]: {
        player: {
          WEB: { file: `${YTA}youtube.html.static`, pick: 'ytInitialPlayerResponse' },
          ANDROID: { file: `${YTA}youtube.innertube.json.static` },
          '*': { file: `${YTA}youtube_po_token_required.innertube.json.static` },
        },
        next: { file: `${YTA}youtube.html.static`, pick: 'ytInitialData' },
        captions: { en: manualEn },
        note: 'WEB caption URLs need a PO token; ANDROID ones do not (3 requests); VISIONOS serves the hand-edited xpe asset. Today: ANDROID gets its recording, VISIONOS and IOS the hand-edited asset with exp removed (clean, like the ANDROID one)',
      },
      [v.autoOnly]: {
        player: {
          WEB: { file: `${NP24}stream/ratingsDisabled/generated_mock_4.json` },
          '*': {
            file: `${NP}stream/youtubestreamextractordefault/ratingsdisabled/generated_mock_1.json`,
            pick: 'playerResponse',
          },
        },
        next: { file: `${NP24}stream/ratingsDisabled/generated_mock_5.json` },
        todayPlayer: {
          VISIONOS: {
            file: `${NP}stream/youtubestreamextractordefault/ratingsdisabled/generated_mock_3.json`,
          },
        },
        captions: { 'a.en': asrEn },
        note: 'only an auto-generated track; comments turned off. Today: VISIONOS answers the RECORDED UNPLAYABLE "This video is not available" for this public video; ANDROID and IOS get the ANDROID recording (asr en)',
      },
      [v.autoOnlyFrench]: {
        player: {
          '*': { file: `${NP}stream/youtubestreamextractordefault/publicbroadcaster/generated_mock_3.json` },
        },
        microformat: {
          file: `${NP}stream/youtubestreamextractordefault/publicbroadcaster/generated_mock_7.json`,
        },
        note: 'single asr fr track, mobile recording without microformat + masked WEB answer with microformat (uploadDate 2023-07-07); today: the same VISIONOS recording for every mobile client',
      },
      [v.germanNamedTrack]: {
        player: {
          WEB: { file: `${NP24}stream/generatedSubtitles/generated_mock_4.json` },
          '*': { file: `${NP24}stream/generatedSubtitles/generated_mock_6.json` },
        },
        next: { file: `${NP24}stream/generatedSubtitles/generated_mock_5.json` },
        todayPlayer: { '*': { file: `${NP24}stream/generatedSubtitles/generated_mock_4.json` } },
        note: 'named manual de track + asr de; the ANDROID answer is a different video. Today: every non-WEB client gets the WEB recording cleaned (no microformat, no exp); the different-video answer stays reachable with failNext differentVideo',
      },
      [v.manyManual]: {
        player: { '*': { file: `${NP24}stream/generatedAndTranslatedSubtitles/generated_mock_4.json` } },
        note: 'nine manual tracks, 125 translation languages (the WEB recording answers every client; today mobile clients get it cleaned)',
      },
      [v.audioTracks]: {
        player: {
          '*': { file: `${NP}stream/youtubestreamextractordefault/audiotracktypes/generated_mock_3.json` },
        },
        next: { file: `${NP}stream/youtubestreamextractordefault/audiotracktypes/generated_mock_8.json` },
        note: 'manual en + en-GB, asr ja; 2026 like button view model (today: the VISIONOS recording for every mobile client)',
      },
      [v.noCaptions]: {
        player: {
          WEB: {
            file: `${YTA_HTML}youtube_transcripts_disabled.html.static`,
            pick: 'ytInitialPlayerResponse',
          },
          '*': { file: `${YTA}youtube_transcripts_disabled.innertube.json.static` },
        },
        next: { file: `${YTA_HTML}youtube_transcripts_disabled.html.static`, pick: 'ytInitialData' },
        note: 'playable without a captions object',
      },
      [v.noDescription]: {
        player: { '*': { file: 'iv-org-mocks/video/regular_no-description.player.json' } },
        next: { file: 'iv-org-mocks/video/regular_no-description.next.json' },
        note: 'no captions, empty description',
      },
      [v.chapters]: {
        player: {
          '*': {
            file: `${NP}stream/youtubestreamextractordefault/streamsegmentsmailab/generated_mock_3.json`,
          },
        },
        next: {
          file: `${NP}stream/youtubestreamextractordefault/streamsegmentsmailab/generated_mock_8.json`,
        },
        note: 'creator chapters in the player bar and the description panel; manual de (today: the VISIONOS recording for every mobile client)',
      },
      [v.commentsDisabled]: {
        player: {
          '*': { file: `${NP}stream/youtubestreamextractordefault/cclicensed/generated_mock_3.json` },
        },
        next: { file: `${NP}stream/youtubestreamextractordefault/cclicensed/generated_mock_8.json` },
        captions: { en: manualEn, 'a.en': asrEn },
        note: 'comments turned off (messageRenderer in comment-item-section), auto chapters; manual + asr en (today: the VISIONOS recording for every mobile client)',
      },
      [v.liveNow]: {
        player: { '*': { file: `${NP24}stream/live/generated_mock_4.json` } },
        note: 'live now: no captions',
      },
      [v.wasLive]: {
        player: { '*': { file: `${YTA}youtube_transcripts_disabled2.innertube.json.static` } },
        note: 'was live (isLiveContent), no captions',
      },
      [v.postLive]: {
        player: { '*': syntheticPlayer('post-live-stream.json', v.postLive) },
        note: 'SYNTHETIC stream that has ended and is being processed (isPostLiveDvr): no caption track yet',
      },
      [v.private]: {
        player: {
          WEB: { file: `${NP24}stream/notAvailable/generated_mock_10.json` },
          '*': {
            file: `${NP}stream/youtubestreamextractordefault/notavailable/privatecontent/generated_mock_1.json`,
            pick: 'playerResponse',
          },
        },
        note: 'LOGIN_REQUIRED private',
      },
      [v.geoBlocked]: {
        player: {
          WEB: { file: `${NP24}stream/notAvailable/generated_mock_14.json` },
          '*': {
            file: `${NP}stream/youtubestreamextractordefault/notavailable/restricted/generated_mock_1.json`,
            pick: 'playerResponse',
          },
        },
        note: 'UNPLAYABLE, country restriction (in the subreason on WEB)',
      },
      [v.membersOnly]: {
        player: { '*': { file: `${NP24}stream/notAvailable/generated_mock_6.json` } },
        note: 'UNPLAYABLE members-only',
      },
      [v.paid]: {
        player: { '*': { file: 'node-ytdl-core/rental/watch.html', pick: 'ytInitialPlayerResponse' } },
        note: 'UNPLAYABLE requires payment',
      },
      [v.musicPremium]: {
        player: {
          '*': {
            file: `${NP}stream/youtubestreamextractordefault/notavailable/musicpremiumcontent/generated_mock_1.json`,
            pick: 'playerResponse',
          },
        },
        note: 'UNPLAYABLE Music Premium (paid)',
      },
      [v.ageRestricted]: {
        player: {
          WEB: { file: `${NP24}stream/ageRestricted/generated_mock_4.json` },
          '*': { file: 'newpipe/727e791/stream/ageRestricted/generated_mock_5.json' },
        },
        next: { file: `${NP24}stream/ageRestricted/generated_mock_6.json` },
        note: 'LOGIN_REQUIRED confirm your age on WEB; the 2024 TV-embedded answer ("Please sign in", UNPLAYABLE) for the others',
      },
      [v.ageRestrictedMobile]: {
        player: { '*': { file: `${YTA}youtube_age_restricted.innertube.json.static` } },
        note: 'LOGIN_REQUIRED "inappropriate for some users" with desktopLegacyAgeGateReason, as ANDROID answers',
      },
      [v.upcomingLive]: {
        player: { '*': { file: 'iv-org-mocks/video/scheduled_live_PBD-Podcast.player.json' } },
        next: { file: 'iv-org-mocks/video/scheduled_live_PBD-Podcast.next.json' },
        note: 'LIVE_STREAM_OFFLINE upcoming',
      },
      [v.invalid]: {
        player: { '*': { file: `${NP24}stream/notAvailable/generated_mock_4.json` } },
        note: 'ERROR Video unavailable',
      },
      [v.nonexistent]: {
        player: {
          '*': {
            file: `${NP}stream/youtubestreamextractordefault/notavailable/nonexistent/generated_mock_1.json`,
          },
        },
        note: 'empty `{}` answer',
      },
      [v.botCheck]: {
        player: { '*': { file: `${YTA}youtube_request_blocked.innertube.json.static` } },
        note: "LOGIN_REQUIRED Sign in to confirm you're not a bot",
      },
      [v.interstitialBotCheck]: {
        player: { '*': syntheticPlayer('interstitial-bot-check.json', v.interstitialBotCheck) },
        note: 'SYNTHETIC interstitial error screen (no reason, no playerErrorMessageRenderer): a bot check',
      },
      [v.interstitialAgeGate]: {
        player: { '*': syntheticPlayer('interstitial-age-gate.json', v.interstitialAgeGate) },
        note: 'SYNTHETIC interstitial error screen (no reason, no playerErrorMessageRenderer): an age gate',
      },
      [v.unplayable]: {
        player: { '*': { file: `${YTA}youtube_unplayable.innertube.json.static` } },
        note: 'hand-edited CUSTOM status with reason and subreasons',
      },
      [v.comments]: {
        player: okPlayer(v.comments, 'comments fixture'),
        next: { file: `${NP}youtubecommentsextractor/replies/generated_mock_2.json` },
        comments: { file: `${NP}youtubecommentsextractor/replies/generated_mock_3.json` },
        note: 'recorded comments chain; the pinned thread has the recorded replies page; the recorded first-page token is exactly the one a client builds from the id',
      },
      [v.madeForKids]: {
        player: {
          WEB: {
            derive: { file: `${YTA_HTML}youtube_ww1_nl_en.html.static`, pick: 'ytInitialPlayerResponse' },
            fromVideoId: v.manualAndAuto,
            videoId: v.madeForKids,
          },
          '*': {
            derive: { file: `${YTA}youtube_ww1_nl_en.innertube.json.static` },
            fromVideoId: v.manualAndAuto,
            videoId: v.madeForKids,
          },
        },
        playability: { VISIONOS: { status: 'ERROR', reason: 'This video is unavailable' } },
        captions: { en: manualEn, 'a.en': asrEn },
        note: 'SYNTHETIC made-for-kids video: VISIONOS says ERROR "This video is unavailable" (not proof the video does not exist); ANDROID and IOS serve it with manual + asr en (copy of F1xioXWb8CY rewritten to this id)',
      },
      [v.unlistedShort]: {
        player: { '*': { file: `${NP}stream/youtubestreamextractordefault/unlisted/generated_mock_3.json` } },
        microformat: { file: `${NP}stream/youtubestreamextractordefault/unlisted/generated_mock_7.json` },
        next: { file: `${NP}stream/youtubestreamextractordefault/unlisted/generated_mock_8.json` },
        note: 'VISIONOS answer (asr en) + masked WEB answer with microformat (isUnlisted, isShortsEligible): the metadata a mobile client lacks',
      },
      [v.translationsListedFirst]: {
        player: { '*': translationsListedFirstPlayer(v.translationsListedFirst) },
        note: 'SYNTHETIC: manual zh, en, ja (zh listed first, a translation); defaultTranslationSourceTrackIndices names en, the original',
      },
      [v.manyTracks]: {
        player: { '*': { file: `${NP}stream/youtubestreamextractorcollaborators/generated_mock_3.json` } },
        microformat: { file: `${NP}stream/youtubestreamextractorcollaborators/generated_mock_7.json` },
        note: '36 caption tracks, 156 translation languages (VISIONOS) + masked WEB answer with microformat (uploadDate, category)',
      },
    },
    continuations: {
      // the values are the tokens the recorded pages were fetched with
    },
    playlists: {
      [playlistIds.classic]: { file: 'newpipe/62b3c3b/playlist/learning/generated_mock_2.json' },
      [playlistIds.small]: { file: 'newpipe/62b3c3b/playlist/continuations/generated_mock_4.json' },
      [playlistIds.shorts]: { file: 'newpipe/62b3c3b/playlist/shortsUI/generated_mock_2.json' },
      [playlistIds.notFound]: { file: 'newpipe/62b3c3b/playlist/notAvailable/generated_mock_3.json' },
      [playlistIds.unviewable]: { file: 'newpipe/62b3c3b/playlist/notAvailable/generated_mock_2.json' },
    },
  };
}

/** Recorded continuation requests: the token is read from the mock's own request body. */
export const RECORDED_CONTINUATIONS = [
  `${NP}youtubecommentsextractor/replies/generated_mock_3.json`,
  `${NP}youtubecommentsextractor/replies/generated_mock_4.json`,
  `${NP}youtubecommentsextractor/thomas/generated_mock_3.json`,
  `${NP}youtubecommentsextractor/pinned/generated_mock_3.json`,
  `${NP}youtubecommentsextractor/creatorreply/generated_mock_3.json`,
  `${NP}youtubecommentsextractor/formatting/generated_mock_3.json`,
  `${NP}youtubecommentsextractor/localizedvotecount/generated_mock_3.json`,
  `${NP}youtubeplaylistextractor/hugeplaylist/generated_mock_3.json`,
  `${NP}youtubeplaylistextractor/hugeplaylist/generated_mock_5.json`,
  `${NP}youtubeplaylistextractor/shortsui/generated_mock_3.json`,
  'newpipe/62b3c3b/playlist/learning/generated_mock_3.json',
];

/** The player answer of `translationsListedFirst` (SYNTHETIC, 2026 shapes). */
function translationsListedFirstPlayer(videoId: string): FixtureRef {
  const track = (languageCode: string, name: string) => ({
    baseUrl: `https://www.youtube.com/api/timedtext?v=${videoId}&ei=fake&caps=asr&opi=1&xoaf=5&hl=en&lang=${languageCode}`,
    name: { runs: [{ text: name }] },
    vssId: `.${languageCode}`,
    languageCode,
    isTranslatable: true,
  });
  return {
    inline: {
      _synthetic: 'SYNTHETIC: an English video with translated manual tracks listed before the original',
      playabilityStatus: { status: 'OK', playableInEmbed: true },
      captions: {
        playerCaptionsTracklistRenderer: {
          captionTracks: [track('zh', 'Chinese'), track('en', 'English'), track('ja', 'Japanese')],
          translationLanguages: ['de', 'fr', 'es', 'en', 'zh-Hans', 'ja'].map((languageCode) => ({
            languageCode,
            languageName: { runs: [{ text: languageCode }] },
          })),
          defaultTranslationSourceTrackIndices: [1],
        },
      },
      videoDetails: {
        videoId,
        title: 'An English talk with translated subtitles',
        lengthSeconds: '6',
        channelId: 'UCsubxSyntheticChannel0A',
        shortDescription: 'Synthetic: translated tracks listed before the original.',
        author: 'Subx Synthetic',
        viewCount: '42',
        isLiveContent: false,
      },
    },
  };
}

/** A hand-written player answer of packages/testing/fixtures-synthetic/player/, rewritten to `videoId`. */
function syntheticPlayer(file: string, videoId: string): FixtureRef {
  const body = JSON.parse(readSynthetic(`player/${file}`)) as { videoDetails?: { videoId?: string } };
  return { inline: { ...body, videoDetails: { ...body.videoDetails, videoId } } };
}

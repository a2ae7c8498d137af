import { type AppError, Errors, type ProcessingReason } from '@subx/errors';
import type { VideoMetadata } from '../types.ts';
import { arr, at, findFirst, isObj, str, text } from './json.ts';

/** Pure functions over a raw `/youtubei/v1/player` response. */

export interface CaptionTrack {
  languageCode: string;
  kind: 'manual' | 'asr';
  name: string;
  vssId: string;
  baseUrl: string;
  isTranslatable: boolean;
  /** The URL carries exp=xpe|xpv: the body comes back empty without a PO token. */
  requiresPoToken: boolean;
}

export interface CaptionList {
  tracks: CaptionTrack[];
  /** Target codes for `tlang`; undefined when the client omitted the list (translation then untested). */
  translationLanguages: string[] | undefined;
  /**
   * The default caption track of the video's default (original) audio track, as an index into
   * `tracks`; undefined when the answer names none.
   */
  originalTrackIndex?: number;
  /**
   * The track the platform translates from by default (`defaultTranslationSourceTrackIndices`), as
   * an index into `tracks`; undefined when the answer names none.
   */
  translationSourceIndex?: number;
}

export function parseCaptionTracks(player: unknown): CaptionList {
  const r = at(player, 'captions', 'playerCaptionsTracklistRenderer');
  const tracks: CaptionTrack[] = [];
  for (const t of arr(at(r, 'captionTracks'))) {
    const baseUrl = str(at(t, 'baseUrl'));
    const languageCode = str(at(t, 'languageCode'));
    if (!baseUrl || !languageCode) continue;
    const kind = str(at(t, 'kind')) === 'asr' ? 'asr' : 'manual';
    tracks.push({
      languageCode,
      kind,
      name: text(at(t, 'name')) ?? languageCode,
      vssId: str(at(t, 'vssId')) ?? `${kind === 'asr' ? 'a' : ''}.${languageCode}`,
      baseUrl,
      isTranslatable: at(t, 'isTranslatable') === true,
      requiresPoToken: /[?&]exp=[^&]*xp[ev]/.test(baseUrl),
    });
  }
  const tl = at(r, 'translationLanguages');
  // audioTracks[defaultAudioTrackIndex].defaultCaptionTrackIndex indexes captionTracks, which the
  // loop above may have shortened (tracks without a URL): map it through the kept ones.
  const audio = arr(at(r, 'audioTracks'));
  const defaultAudio = audio[Number(at(r, 'defaultAudioTrackIndex') ?? 0)] ?? audio[0];
  const kept = (rawIndex: unknown): number => {
    const rawTrack = typeof rawIndex === 'number' ? arr(at(r, 'captionTracks'))[rawIndex] : undefined;
    const rawUrl = str(at(rawTrack, 'baseUrl'));
    return rawUrl ? tracks.findIndex((t) => t.baseUrl === rawUrl) : -1;
  };
  const originalTrackIndex = kept(at(defaultAudio, 'defaultCaptionTrackIndex'));
  const translationSourceIndex = kept(arr(at(r, 'defaultTranslationSourceTrackIndices'))[0]);
  return {
    ...(originalTrackIndex >= 0 ? { originalTrackIndex } : {}),
    ...(translationSourceIndex >= 0 ? { translationSourceIndex } : {}),
    tracks,
    translationLanguages: Array.isArray(tl)
      ? tl.map((x) => str(at(x, 'languageCode'))).filter((x): x is string => !!x)
      : undefined,
  };
}

export type Playability =
  | { ok: true }
  | {
      ok: false;
      error: AppError;
      /** True when another client cannot change the answer (private, members-only, ...). */
      definitive: boolean;
      /**
       * "Not found" from one client (`ERROR`, or the `{}` of the reel endpoint): VISIONOS answers ERROR for
       * some public videos (made-for-kids), so another client must confirm it before VIDEO_NOT_FOUND.
       */
      unconfirmedNotFound?: boolean;
      /** A session/IP signal (page reload, unexplained sign-in): worth one retry on a fresh session. */
      sessionSignal?: boolean;
    };

/**
 * The error screen's interstitial shape (since October 2026, often with no `reason` and no
 * `playerErrorMessageRenderer`): `errorScreen.playerInterstitialRenderer.content.interstitialViewModel`
 * with `title.content` and `description.content` as plain strings.
 */
function interstitial(ps: unknown): { title?: string; description?: string } {
  const view = at(ps, 'errorScreen', 'playerInterstitialRenderer', 'content', 'interstitialViewModel');
  const title = str(at(view, 'title', 'content'));
  const description = str(at(view, 'description', 'content'));
  return { ...(title ? { title } : {}), ...(description ? { description } : {}) };
}

function playabilityText(ps: unknown): string {
  const screen = interstitial(ps);
  const parts = [
    str(at(ps, 'reason')),
    text(at(ps, 'errorScreen', 'playerErrorMessageRenderer', 'reason')),
    text(at(ps, 'errorScreen', 'playerErrorMessageRenderer', 'subreason')),
    screen.title,
    screen.description,
    ...arr(at(ps, 'messages')).map((m) => str(m)),
  ];
  return parts.filter(Boolean).join(' | ');
}

/**
 * Maps `playabilityStatus` (and the sanity checks around it) to the error taxonomy. The reasons are the
 * English ones: requests always send hl=en.
 */
export function classifyPlayability(player: unknown, requestedId: string): Playability {
  if (!isObj(player) || (player.playabilityStatus === undefined && player.videoDetails === undefined)) {
    // The ANDROID/reel endpoints answer an unknown id with `{}`.
    return {
      ok: false,
      error: Errors.videoNotFound(requestedId),
      definitive: false,
      unconfirmedNotFound: true,
    };
  }
  const ps = player.playabilityStatus;
  const status = str(at(ps, 'status')) ?? 'OK';
  const msg = playabilityText(ps);
  const low = msg.toLowerCase();
  // the headline reason decides blocks; sub-reasons are often boilerplate copied between error screens
  const headline = (
    str(at(ps, 'reason')) ??
    text(at(ps, 'errorScreen', 'playerErrorMessageRenderer', 'reason')) ??
    interstitial(ps).title ??
    ''
  ).toLowerCase();
  const blocked = (reason: Parameters<typeof Errors.upstreamBlocked>[0], message: string, session = false) =>
    ({
      ok: false,
      error: Errors.upstreamBlocked(reason, message),
      definitive: false,
      ...(session ? { sessionSignal: true } : {}),
    }) as const;
  if (findFirst(ps, 'playerCaptchaViewModel') !== undefined) {
    return blocked('captcha', 'The platform asked for a captcha.');
  }
  if (headline.includes('not a bot')) {
    return blocked('bot_check', `The platform asked to confirm we are not a bot: ${msg}`, true);
  }
  if (headline.includes('try again later')) {
    return blocked('rate_limited', `The platform rate-limited us: ${msg}`, true);
  }
  if (headline.includes('page needs to be reloaded')) {
    return blocked('page_reload', `The platform asked to reload the page (a session signal): ${msg}`, true);
  }
  if (status === 'OK') {
    const returned = str(at(player, 'videoDetails', 'videoId'));
    if (returned !== undefined && returned !== requestedId) {
      return blocked(
        'bot_check',
        `The platform answered with a different video (${returned}) than requested (${requestedId}); the IP is likely blocked.`,
      );
    }
    return { ok: true };
  }
  const unavailable = (
    reason: Parameters<typeof Errors.videoUnavailable>[1],
    definitive = true,
  ): Playability => ({
    ok: false,
    error: Errors.videoUnavailable(requestedId, reason, msg || undefined),
    definitive,
  });
  if (low.includes('private') || low.includes('granted access')) return unavailable('private');
  // desktopLegacyAgeGateReason marks the age gate whatever the language of the reason
  if (
    at(ps, 'desktopLegacyAgeGateReason') !== undefined ||
    /confirm your age|age-restricted|inappropriate for some users|age_verification|age_check/.test(low)
  ) {
    return unavailable('age_restricted');
  }
  if (low.includes('in your country') || low.includes('not available in your')) {
    return unavailable('geo_blocked');
  }
  if (/premium|requires payment|\brent(al|ed)?\b|purchase/.test(low)) return unavailable('paid');
  if (low.includes('members')) return unavailable('members_only');
  if (
    status === 'LIVE_STREAM_OFFLINE' ||
    at(player, 'videoDetails', 'isUpcoming') === true ||
    /will begin|premieres? in|scheduled/.test(low)
  ) {
    return unavailable('upcoming_live');
  }
  if (/removed|terminated|no longer available|copyright claim/.test(low)) return unavailable('removed');
  if (status === 'LOGIN_REQUIRED') {
    // neither age nor privacy (both handled above): "Sign in to continue" is about our session or IP
    return blocked('login_required', `The platform asked us to sign in (a session signal): ${msg}`, true);
  }
  if (status === 'ERROR') {
    return {
      ok: false,
      error: Errors.videoNotFound(requestedId),
      definitive: false,
      unconfirmedNotFound: true,
    };
  }
  // UNPLAYABLE "This video is not available", custom statuses: these are client-specific more often than
  // not, so another client may still succeed.
  return unavailable('unplayable', false);
}

/**
 * Why a playable video's captions are not there yet, if they are not: `post_live` for a stream that
 * has ended and is still being processed (`videoDetails.isPostLiveDvr`, yt-dlp's live status
 * `post_live`: "some formats may not be available until processing is complete"), `live` for a stream
 * that is live now (`isLive`, or `playabilityStatus.liveStreamability`).
 */
export function captionsPendingOf(player: unknown): ProcessingReason | undefined {
  const vd = at(player, 'videoDetails');
  if (at(vd, 'isPostLiveDvr') === true) return 'post_live';
  if (at(vd, 'isLive') === true || at(player, 'playabilityStatus', 'liveStreamability') !== undefined)
    return 'live';
  return undefined;
}

/** YYYYMMDD in UTC. A timestamp with time and offset is converted; a bare date is taken as is. */
export function toUploadDate(value: string | undefined): string {
  if (!value) return '';
  const bare = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (bare) return `${bare[1]}${bare[2]}${bare[3]}`;
  const t = Date.parse(value);
  if (!Number.isFinite(t)) return '';
  return new Date(t).toISOString().slice(0, 10).replaceAll('-', '');
}

export function hasMicroformat(player: unknown): boolean {
  return isObj(at(player, 'microformat', 'playerMicroformatRenderer'));
}

function bestThumbnail(...lists: unknown[]): string | undefined {
  let best: { url: string; area: number; jpg: boolean } | undefined;
  for (const list of lists) {
    for (const t of arr(list)) {
      const url = str(at(t, 'url'));
      if (!url) continue;
      const area = (Number(at(t, 'width')) || 0) * (Number(at(t, 'height')) || 0);
      // webp variants are the same picture; prefer a jpg every client can show
      const jpg = !url.includes('vi_webp');
      if (!best || (jpg && !best.jpg) || (jpg === best.jpg && area >= best.area)) best = { url, area, jpg };
    }
  }
  return best?.url;
}

function num(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && /^\d+$/.test(v)) return Number(v);
  return undefined;
}

/**
 * Metadata available from player responses. `primary` is the response that listed the captions; `web` an
 * optional WEB response carrying `microformat` (mobile clients omit it).
 */
export function parsePlayerMetadata(
  videoId: string,
  primary: unknown,
  web?: unknown,
): Required<
  Pick<
    VideoMetadata,
    | 'title'
    | 'channel'
    | 'channelId'
    | 'duration'
    | 'uploadDate'
    | 'thumbnailUrl'
    | 'description'
    | 'tags'
    | 'categories'
    | 'viewCount'
    | 'isLive'
    | 'wasLive'
  >
> {
  const vd = at(primary, 'videoDetails') ?? at(web, 'videoDetails');
  const mf =
    at(primary, 'microformat', 'playerMicroformatRenderer') ??
    at(web, 'microformat', 'playerMicroformatRenderer');
  // a stream in its post-live processing has ended: it was live, it is not any more
  const postLive = at(vd, 'isPostLiveDvr') === true;
  const isLive =
    !postLive && (at(vd, 'isLive') === true || at(mf, 'liveBroadcastDetails', 'isLiveNow') === true);
  const isUpcoming = at(vd, 'isUpcoming') === true;
  const category = str(at(mf, 'category'));
  return {
    title: str(at(vd, 'title')) ?? text(at(mf, 'title')) ?? '',
    channel: str(at(vd, 'author')) ?? str(at(mf, 'ownerChannelName')) ?? '',
    channelId: str(at(vd, 'channelId')) ?? str(at(mf, 'externalChannelId')) ?? '',
    duration: num(at(vd, 'lengthSeconds')) ?? num(at(mf, 'lengthSeconds')) ?? 0,
    uploadDate: toUploadDate(str(at(mf, 'uploadDate')) ?? str(at(mf, 'publishDate'))),
    thumbnailUrl:
      bestThumbnail(at(vd, 'thumbnail', 'thumbnails'), at(mf, 'thumbnail', 'thumbnails')) ??
      `https://i.ytimg.com/vi/${videoId}/hqdefault.jpg`,
    description: str(at(vd, 'shortDescription')) ?? text(at(mf, 'description')) ?? '',
    tags: arr(at(vd, 'keywords')).filter((k): k is string => typeof k === 'string'),
    categories: category ? [category] : [],
    viewCount: num(at(vd, 'viewCount')) ?? num(at(mf, 'viewCount')) ?? 0,
    isLive,
    wasLive: postLive || (at(vd, 'isLiveContent') === true && !isLive && !isUpcoming),
  };
}

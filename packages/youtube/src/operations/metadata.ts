/** Video metadata: the ladder's /player, the field-masked WEB /player and (when asked) /next. */
import { Errors } from '@subx/errors';
import type { Lease } from '../innertube.ts';
import type { PlayerHit } from '../ladder/player-ladder.ts';
import { parseChapters, parseCommentCount, parseDateText, parseLikeCount } from '../parse/next.ts';
import { hasMicroformat, parsePlayerMetadata } from '../parse/player.ts';
import { playerBody } from '../requests.ts';
import { NEXT_FIELDS, type MetadataField, type VideoMetadata } from '../types.ts';
import type { YouTubeOperations } from './context.ts';

/** Field mask of the metadata-only WEB /player: what the mobile clients lack (upload date, category). */
const MICROFORMAT_MASK = '&$fields=microformat,videoDetails';

/** One round trip: the ladder's /player, the masked WEB /player and (when asked) /next in parallel. */
export async function getMetadata(
  yt: YouTubeOperations,
  videoId: string,
  include: readonly MetadataField[] = [],
): Promise<VideoMetadata> {
  const lease = yt.innertube.lease();
  const nextP = maybeNext(yt, videoId, include, lease);
  const webP = maskedWebPlayer(yt, videoId, lease);
  try {
    let primary: PlayerHit | undefined;
    for await (const hit of yt.players.players(videoId, lease)) {
      primary = hit;
      break;
    }
    if (!primary) throw Errors.upstreamError('No client returned a usable player response.');
    return await metadataFrom(yt, videoId, primary.player, include, nextP, lease, webP);
  } finally {
    nextP?.catch(() => undefined);
  }
}

export function maybeNext(
  yt: YouTubeOperations,
  videoId: string,
  include: readonly MetadataField[],
  lease: Lease,
): Promise<unknown> | undefined {
  if (!include.some((f) => NEXT_FIELDS.includes(f))) return undefined;
  return yt.innertube.post('next', yt.innertube.config.webClient, { videoId }, { lease });
}

/** WEB /player masked to microformat: upload date and category. Failure only costs those fields. */
function maskedWebPlayer(yt: YouTubeOperations, videoId: string, lease: Lease): Promise<unknown> {
  return yt.innertube
    .post('player', yt.innertube.config.webClient, playerBody(videoId, false), {
      lease,
      query: MICROFORMAT_MASK,
    })
    .catch((err: unknown) => {
      yt.logger?.warn({ videoId, err: (err as Error).message }, 'microformat request failed');
      return undefined;
    });
}

/**
 * The upload date from watch-next, for when neither player answer carried one (a mobile answer
 * without microformat and a masked WEB answer that failed or lacked it): one more request, only
 * then, so that the date does not depend on whether likes or chapters were asked for. Failure
 * only costs the date.
 */
async function dateFromNext(yt: YouTubeOperations, videoId: string, lease: Lease): Promise<string> {
  try {
    return parseDateText(
      await yt.innertube.post('next', yt.innertube.config.webClient, { videoId }, { lease }),
    );
  } catch (err) {
    yt.logger?.warn(
      { videoId, err: (err as Error).message },
      'watch-next request for the upload date failed',
    );
    return '';
  }
}

export async function metadataFrom(
  yt: YouTubeOperations,
  videoId: string,
  primary: unknown,
  include: readonly MetadataField[],
  nextP: Promise<unknown> | undefined,
  lease: Lease,
  webP?: Promise<unknown>,
): Promise<VideoMetadata> {
  const web = hasMicroformat(primary) ? undefined : await (webP ?? maskedWebPlayer(yt, videoId, lease));
  const base = parsePlayerMetadata(videoId, primary, web);
  const next = nextP ? await nextP : undefined;
  const meta: VideoMetadata = {
    title: base.title,
    channel: base.channel,
    channelId: base.channelId,
    duration: base.duration,
    uploadDate:
      base.uploadDate || (next ? parseDateText(next) : nextP ? '' : await dateFromNext(yt, videoId, lease)),
    thumbnailUrl: base.thumbnailUrl,
  };
  const want = new Set(include);
  if (want.has('description')) meta.description = base.description;
  if (want.has('tags')) meta.tags = base.tags;
  if (want.has('categories')) meta.categories = base.categories;
  if (want.has('view_count')) meta.viewCount = base.viewCount;
  if (want.has('is_live')) meta.isLive = base.isLive;
  if (want.has('was_live')) meta.wasLive = base.wasLive;
  if (next !== undefined) {
    // Hidden like counts and turned-off comments read as 0.
    if (want.has('like_count')) meta.likeCount = parseLikeCount(next) ?? 0;
    if (want.has('comment_count')) meta.commentCount = parseCommentCount(next) ?? 0;
    if (want.has('chapters')) meta.chapters = parseChapters(next, base.duration);
  }
  return meta;
}

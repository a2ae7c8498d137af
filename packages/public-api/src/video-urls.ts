/**
 * URL → id for the routes. The accepted forms are @subx/youtube's (docs/decisions.md "Inputs"); this
 * module only turns "not accepted" into the INVALID_URL error, whose message shows an accepted form
 * (docs/api.md "Extract"). Bare ids are not accepted, on purpose: `url` stays a URL everywhere
 * (extract, batch, jobs, MCP), and the error hands over the exact URL to send instead.
 */
import { AppError, Errors } from '@subx/errors';
import { isVideoId, parsePlaylistUrl, parseVideoUrl } from '@subx/youtube';

const watchUrl = (id: string) => `https://www.youtube.com/watch?v=${id}`;

const ACCEPTED_VIDEO_FORMS =
  'Send a video URL such as https://www.youtube.com/watch?v=<11-character id> (youtu.be/<id>, /shorts/<id>, /live/<id> and /embed/<id> links work too).';

/**
 * The watch URL the caller most likely meant, for the two common slips: a bare video id, or a
 * video URL without its scheme (`youtube.com/watch?v=…`). Null otherwise.
 */
function meantVideoUrl(input: string): { url: string; why: string } | null {
  const trimmed = input.trim();
  if (isVideoId(trimmed)) return { url: watchUrl(trimmed), why: `${trimmed} is a video id, not a URL` };
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) {
    const id = parseVideoUrl(`https://${trimmed}`);
    if (id) return { url: watchUrl(id), why: 'The URL has no scheme' };
  }
  return null;
}

const messageFor = (meant: ReturnType<typeof meantVideoUrl>) =>
  meant
    ? `${meant.why}: send ${meant.url} instead.`
    : `The URL is not an accepted video URL. ${ACCEPTED_VIDEO_FORMS}`;

/** The INVALID_URL message for a video URL input (also the error_message of batch and job items). */
export function invalidVideoUrlMessage(input: string): string {
  return messageFor(meantVideoUrl(input));
}

/** 400 INVALID_URL with the accepted form; `suggested_url` when the URL meant is clear. */
function invalidVideoUrl(input: string): AppError {
  const meant = meantVideoUrl(input);
  return new AppError(
    'INVALID_URL',
    messageFor(meant),
    meant ? { details: { suggested_url: meant.url } } : {},
  );
}

export function videoIdOf(url: string): string {
  const id = parseVideoUrl(url);
  if (!id) throw invalidVideoUrl(url);
  return id;
}

/** null when the URL is not an accepted video URL (batch items report it instead of failing). */
export function tryVideoIdOf(url: string): string | null {
  return parseVideoUrl(url);
}

export function playlistIdOf(url: string): string {
  const id = parsePlaylistUrl(url);
  if (!id) {
    throw new AppError(
      'INVALID_URL',
      'The URL is not an accepted playlist URL. Send https://www.youtube.com/playlist?list=<playlist id>, or a watch URL carrying list=<playlist id>.',
    );
  }
  return id;
}

/**
 * The video of a body that may name it `url` (extract's name) or `video_url` (summarize's and
 * comments/analyze's first name, still accepted): exactly one of them, or both naming the same
 * video. The body schema cannot say "one of two" in a way generated clients read well, so the
 * route checks it here, as a 400 naming the field.
 */
export function videoUrlOfBody(body: { url?: string; video_url?: string }): string {
  const { url, video_url: videoUrl } = body;
  if (url === undefined && videoUrl === undefined) {
    throw Errors.invalidRequest('body.url is required (or its other name, body.video_url)', { field: 'url' });
  }
  if (url !== undefined && videoUrl !== undefined && url !== videoUrl) {
    const a = parseVideoUrl(url);
    if (a === null || a !== parseVideoUrl(videoUrl)) {
      throw Errors.invalidRequest(
        'body.video_url names another video than body.url; send the video once, as url (video_url is its other name)',
        { field: 'video_url' },
      );
    }
  }
  return (url ?? videoUrl)!;
}

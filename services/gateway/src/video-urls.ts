/**
 * URL → id for the routes. The accepted forms are @subx/youtube's (docs/decisions.md "Inputs"); this
 * module only turns "not accepted" into the INVALID_URL error.
 */
import { Errors } from '@subx/errors';
import { parsePlaylistUrl, parseVideoUrl } from '@subx/youtube';

export function videoIdOf(url: string): string {
  const id = parseVideoUrl(url);
  if (!id) throw Errors.invalidUrl();
  return id;
}

/** null when the URL is not an accepted video URL (batch items report it instead of failing). */
export function tryVideoIdOf(url: string): string | null {
  return parseVideoUrl(url);
}

export function playlistIdOf(url: string): string {
  const id = parsePlaylistUrl(url);
  if (!id) throw Errors.invalidUrl('The URL is not an accepted playlist URL.');
  return id;
}

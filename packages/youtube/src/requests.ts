import { Errors } from '@subx/errors';
import type { InnertubeClient } from './clients.ts';

/**
 * The body of a /player request. `signatureTimestamp` only for WEB-family clients on the caption ladder:
 * without it WEB answers without `captions` (since Aug 2026).
 */
export function playerBody(
  videoId: string,
  withSignatureTimestamp: boolean,
  client?: InnertubeClient,
): Record<string, unknown> {
  const sts = withSignatureTimestamp ? client?.signatureTimestamp : undefined;
  return {
    videoId,
    contentCheckOk: true,
    racyCheckOk: true,
    playbackContext: {
      contentPlaybackContext: {
        html5Preference: 'HTML5_PREF_WANTS',
        ...(sts !== undefined ? { signatureTimestamp: sts } : {}),
      },
    },
  };
}

/** A platform answer as JSON, or UPSTREAM_ERROR naming which answer was not. */
export function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw Errors.upstreamError(`The platform's ${what} answer is not JSON.`);
  }
}

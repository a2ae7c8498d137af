/**
 * A video's audio for transcription: the first player of the caption ladder that lists an
 * audio-only format with a plain URL (VISIONOS today: no PO token, no player JavaScript), its
 * lowest-bitrate such format fetched in ranges up to a cap, and the video's metadata. Clients whose
 * streams need a PO token (WEB, WEB_EMBEDDED) are not asked; for a video every client answers
 * unplayable (made for kids), an adopted IOS_PRODUCER is asked last.
 */
import { AppError, Errors, networkFailureError } from '@subx/errors';
import {
  AudioFetchError,
  AudioTooLargeError,
  audioHostsOf,
  fetchAudioRanged,
  pickAudioFormat,
} from '../audio/audio.ts';
import type { AudioFormat } from '../audio/audio.ts';
import type { MetadataField, VideoMetadata } from '../types.ts';
import type { YouTubeOperations } from './context.ts';
import { captionsPendingOf } from '../parse/player.ts';
import { maybeNext, metadataFrom } from './metadata.ts';

export interface VideoAudio {
  videoId: string;
  format: AudioFormat;
  /**
   * The audio as the platform served it, fetched piece by piece as it is read (one ranged request
   * per piece, at most maxBytes in all): the reader decides where a piece goes before the next is
   * fetched, so no more than one is held here. Read it once; its errors are the API's
   * (AUDIO_TOO_LONG past maxBytes, UPSTREAM_ERROR when the audio host fails or cannot be
   * reached, UPSTREAM_TIMEOUT when it does not answer in time).
   */
  pieces: AsyncIterable<Uint8Array>;
  metadata: VideoMetadata;
}

export interface AudioRequest {
  videoId: string;
  include?: readonly MetadataField[];
  /** Cap on the audio's size in bytes (default 25 MB). */
  maxBytes?: number;
  /** Refused before any byte is fetched when the video is longer (seconds). */
  maxSeconds?: number;
  /** Stops the download (its caller stopped waiting). */
  signal?: AbortSignal;
}

/** The ranged download with its errors in the API's terms. */
async function* audioPieces(
  url: string,
  options: { maxBytes?: number | undefined; signal?: AbortSignal | undefined; hosts: readonly string[] },
): AsyncGenerator<Uint8Array> {
  try {
    yield* fetchAudioRanged(url, {
      ...(options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      hosts: options.hosts,
    });
  } catch (err) {
    if (err instanceof AudioTooLargeError) {
      throw new AppError(
        'AUDIO_TOO_LONG',
        `The video's audio is larger than the ${err.maxBytes} bytes this deployment downloads.`,
        { details: { max_bytes: err.maxBytes }, cause: err },
      );
    }
    if (err instanceof AudioFetchError)
      throw Errors.upstreamError(`The audio download failed: ${err.message}`, err);
    throw networkFailureError(err, "The video's audio host") ?? err;
  }
}

export async function getAudio(yt: YouTubeOperations, req: AudioRequest): Promise<VideoAudio> {
  const include = req.include ?? [];
  const lease = yt.innertube.lease();
  const nextP = maybeNext(yt, req.videoId, include, lease);
  try {
    for await (const hit of yt.players.players(req.videoId, lease, { streams: true })) {
      // a stream live now or still being processed has no whole audio yet (nor captions): later
      const pending = captionsPendingOf(hit.player);
      if (pending) throw Errors.videoProcessing(req.videoId, pending);
      const format = pickAudioFormat(hit.player);
      if (!format) continue;
      const metadata = await metadataFrom(yt, req.videoId, hit.player, include, nextP, lease);
      if (req.maxSeconds !== undefined && metadata.duration > req.maxSeconds) {
        throw new AppError(
          'AUDIO_TOO_LONG',
          `The video is ${metadata.duration} s long; this request may transcribe at most ${req.maxSeconds} s of audio.`,
          { details: { max_seconds: req.maxSeconds } },
        );
      }
      return {
        videoId: req.videoId,
        format,
        pieces: audioPieces(format.url, {
          maxBytes: req.maxBytes,
          signal: req.signal,
          hosts: audioHostsOf(yt.innertube.config.baseUrl),
        }),
        metadata,
      };
    }
    throw Errors.upstreamError('No client returned an audio-only format with a plain URL.');
  } finally {
    nextP?.catch(() => undefined);
  }
}

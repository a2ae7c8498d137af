/**
 * A video's audio for transcription: the first player of the caption ladder that lists an
 * audio-only format with a plain URL (VISIONOS today: no PO token, no player JavaScript), its
 * lowest-bitrate such format fetched in ranges up to a cap, and the video's metadata.
 */
import { AppError, Errors } from '@subx/errors';
import { AudioFetchError, AudioTooLargeError, fetchAudioRanged, pickAudioFormat } from '../audio/audio.ts';
import type { AudioFormat } from '../audio/audio.ts';
import type { MetadataField, VideoMetadata } from '../types.ts';
import type { YouTubeOperations } from './context.ts';
import { maybeNext, metadataFrom } from './metadata.ts';

export interface VideoAudio {
  videoId: string;
  format: AudioFormat;
  /** The audio as the platform served it, piece by piece (at most maxBytes in all). */
  pieces: Uint8Array[];
  bytes: number;
  metadata: VideoMetadata;
}

export interface AudioRequest {
  videoId: string;
  include?: readonly MetadataField[];
  /** Cap on the audio's size (default 25 MB, what OpenAI's endpoint takes in one request). */
  maxBytes?: number;
  /** Refused before any byte is fetched when the video is longer (seconds). */
  maxSeconds?: number;
}

export async function getAudio(yt: YouTubeOperations, req: AudioRequest): Promise<VideoAudio> {
  const include = req.include ?? [];
  const lease = yt.innertube.lease();
  const nextP = maybeNext(yt, req.videoId, include, lease);
  try {
    for await (const hit of yt.players.players(req.videoId, lease)) {
      const format = pickAudioFormat(hit.player);
      if (!format) continue;
      const metadata = await metadataFrom(yt, req.videoId, hit.player, include, nextP, lease);
      if (req.maxSeconds !== undefined && metadata.duration > req.maxSeconds) {
        throw new AppError(
          'AUDIO_TOO_LONG',
          `The video is ${metadata.duration} s long; this deployment transcribes at most ${req.maxSeconds} s.`,
          { details: { max_seconds: req.maxSeconds } },
        );
      }
      const pieces: Uint8Array[] = [];
      let bytes = 0;
      try {
        for await (const piece of fetchAudioRanged(format.url, {
          ...(req.maxBytes === undefined ? {} : { maxBytes: req.maxBytes }),
        })) {
          pieces.push(piece);
          bytes += piece.byteLength;
        }
      } catch (err) {
        if (err instanceof AudioTooLargeError) {
          throw new AppError(
            'AUDIO_TOO_LONG',
            `The video's audio is larger than the ${err.maxBytes} bytes the model takes in one request.`,
            { details: { max_bytes: err.maxBytes }, cause: err },
          );
        }
        if (err instanceof AudioFetchError)
          throw Errors.upstreamError(`The audio download failed: ${err.message}`, err);
        throw err;
      }
      return { videoId: req.videoId, format, pieces, bytes, metadata };
    }
    throw Errors.upstreamError('No client returned an audio-only format with a plain URL.');
  } finally {
    nextP?.catch(() => undefined);
  }
}

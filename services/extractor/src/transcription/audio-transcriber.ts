/**
 * A video's audio to its transcript: spooled to a temporary file as it downloads, cut into parts
 * the endpoint takes when it is larger than that (audio-file.ts says how), each part transcribed in
 * order and its timings moved by the part's start. The temporary files go when it returns.
 */
import { join } from 'node:path';
import type { VideoAudio } from '@subx/youtube';
import { audioWorkspace, inputFormatOf, spoolAudio, splitAudio } from './audio-file.ts';
import { AccountTurns } from './account-turns.ts';
import type { Transcription, TranscriptionClient } from './client.ts';

export interface AudioTranscriberOptions {
  /** Where the temporary audio files go. */
  spoolDir: string;
  /** The endpoint's per-request limit in bytes: larger audio is split. */
  maxPartBytes: number;
  /** The ffmpeg that splits; undefined: audio over maxPartBytes is refused (422 AUDIO_TOO_LONG). */
  ffmpeg: string | undefined;
  /** Bound on one ffmpeg run. */
  splitTimeoutMs: number;
  /**
   * Transcriptions at once, counted from the first byte downloaded to the model's last answer:
   * the spool holds at most this many videos' audio (each twice while it is split).
   */
  concurrency: number;
  /** Transcriptions waiting for a slot, in all (default 32); past it 503, retryable. */
  maxWaiting?: number;
  /** Transcriptions of one account waiting for a slot (default 4); past it 503, retryable. */
  maxWaitingPerAccount?: number;
}

/** Who asks, and how long it may wait. */
export interface TranscribeOptions {
  /** Aborts the wait, the download and the model's request. */
  signal?: AbortSignal | undefined;
  /** Whose turn in the queue (GetTranscriptRequest.account_id); '' or absent: anonymous. */
  account?: string | undefined;
  /** The caller's deadline: the wait ends `minLeftMs` before it, too late to start. */
  deadline?: Date | undefined;
  minLeftMs?: number | undefined;
}

/** The file name's extension the endpoint reads the container from (OpenAI checks it). */
function audioExtension(mimeType: string): string {
  if (mimeType.startsWith('audio/webm')) return 'webm';
  if (mimeType.startsWith('audio/mp4')) return 'm4a';
  return 'mp3';
}

export class AudioTranscriber {
  readonly #client: Pick<TranscriptionClient, 'transcribe'>;
  readonly #options: AudioTranscriberOptions;
  readonly #turns: AccountTurns;

  constructor(client: Pick<TranscriptionClient, 'transcribe'>, options: AudioTranscriberOptions) {
    this.#client = client;
    this.#options = options;
    this.#turns = new AccountTurns({
      slots: options.concurrency,
      maxWaiting: options.maxWaiting ?? 32,
      perAccount: options.maxWaitingPerAccount ?? 4,
    });
  }

  /** Transcriptions waiting for a slot now. */
  get waiting(): number {
    return this.#turns.waiting;
  }

  /** Transcriptions holding a slot now: downloading, being cut, or with the model. */
  get inFlight(): number {
    return this.#turns.running;
  }

  async transcribe(
    audio: Pick<VideoAudio, 'videoId' | 'format' | 'pieces' | 'metadata'>,
    options: TranscribeOptions = {},
  ): Promise<Transcription> {
    const until =
      options.deadline === undefined ? undefined : options.deadline.getTime() - (options.minLeftMs ?? 0);
    return this.#turns.run({ account: options.account ?? '', signal: options.signal, until }, () =>
      this.#transcribe(audio, options.signal),
    );
  }

  async #transcribe(
    audio: Pick<VideoAudio, 'videoId' | 'format' | 'pieces' | 'metadata'>,
    signal: AbortSignal | undefined,
  ): Promise<Transcription> {
    const workspace = await audioWorkspace(this.#options.spoolDir);
    try {
      const extension = audioExtension(audio.format.mimeType);
      const path = join(workspace.dir, `audio.${extension}`);
      const bytes = await spoolAudio(audio.pieces, path);
      const durationSeconds = (audio.format.approxDurationMs ?? 0) / 1000 || audio.metadata.duration || 0;
      const parts = await splitAudio(path, bytes, workspace.dir, extension, {
        maxPartBytes: this.#options.maxPartBytes,
        durationSeconds,
        ffmpeg: this.#options.ffmpeg,
        timeoutMs: this.#options.splitTimeoutMs,
        inputFormat: inputFormatOf(audio.format.mimeType),
      });
      // The container's type without its codec parameters, as a file upload names it.
      const mimeType = audio.format.mimeType.split(';')[0]!.trim() || 'application/octet-stream';
      return await this.#client.transcribe(parts, `${audio.videoId}.${extension}`, mimeType, signal);
    } finally {
      await workspace.dispose();
    }
  }
}

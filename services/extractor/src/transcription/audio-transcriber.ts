/**
 * A video's audio to its transcript: spooled to a temporary file as it downloads, cut into parts
 * the endpoint takes when it is larger than that (audio-file.ts says how), each part transcribed in
 * order and its timings moved by the part's start. The temporary files go when it returns.
 */
import { join } from 'node:path';
import type { VideoAudio } from '@subx/youtube';
import { audioWorkspace, spoolAudio, splitAudio } from './audio-file.ts';
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
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(client: Pick<TranscriptionClient, 'transcribe'>, options: AudioTranscriberOptions) {
    this.#client = client;
    this.#options = options;
  }

  async transcribe(
    audio: Pick<VideoAudio, 'videoId' | 'format' | 'pieces' | 'metadata'>,
  ): Promise<Transcription> {
    // A finishing call hands its slot to the first waiter without freeing it.
    if (this.#running >= this.#options.concurrency) {
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#running += 1;
    }
    try {
      return await this.#transcribe(audio);
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running -= 1;
    }
  }

  async #transcribe(
    audio: Pick<VideoAudio, 'videoId' | 'format' | 'pieces' | 'metadata'>,
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
      });
      // The container's type without its codec parameters, as a file upload names it.
      const mimeType = audio.format.mimeType.split(';')[0]!.trim() || 'application/octet-stream';
      return await this.#client.transcribe(parts, `${audio.videoId}.${extension}`, mimeType);
    } finally {
      await workspace.dispose();
    }
  }
}

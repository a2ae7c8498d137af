/** Speech-to-text through an OpenAI-compatible `/v1/audio/transcriptions` endpoint. */
import OpenAI, { toFile } from 'openai';
import { AppError } from '@subx/errors';

export interface TranscribeConfig {
  baseURL: string;
  apiKey: string | undefined;
  model: string;
  timeoutMs: number;
  concurrency: number;
}

const LANGUAGE_CODES: Record<string, string> = {
  english: 'en',
  german: 'de',
  french: 'fr',
  spanish: 'es',
  italian: 'it',
  portuguese: 'pt',
  dutch: 'nl',
  russian: 'ru',
  japanese: 'ja',
  chinese: 'zh',
  korean: 'ko',
  arabic: 'ar',
  hindi: 'hi',
  turkish: 'tr',
  polish: 'pl',
  swedish: 'sv',
  ukrainian: 'uk',
  czech: 'cs',
  greek: 'el',
  hebrew: 'he',
  indonesian: 'id',
  vietnamese: 'vi',
  thai: 'th',
  danish: 'da',
  finnish: 'fi',
  norwegian: 'no',
  hungarian: 'hu',
  romanian: 'ro',
};

/** OpenAI answers language names ("english"); other servers may answer codes ("en"). */
export function languageCode(language: string | undefined): string {
  const l = (language ?? '').trim().toLowerCase();
  if (l === '') return 'und';
  return LANGUAGE_CODES[l] ?? (/^[a-z]{2,3}(-[a-z0-9]+)*$/.test(l) ? l : 'und');
}

interface TranscribedSegment {
  start: number;
  duration: number;
  text: string;
}

export interface Transcription {
  language: string;
  durationSeconds: number;
  segments: TranscribedSegment[];
}

/** The model answered no speech (no segment with text): 404 NO_SPEECH. */
const noSpeech = () =>
  new AppError(
    'NO_SPEECH',
    'The video has no captions and its audio holds no speech the model could transcribe.',
  );

/** The model failed, timed out or answered something unusable: 502 TRANSCRIPTION_FAILED, retryable. */
const failed = (why: string, cause?: unknown) =>
  new AppError(
    'TRANSCRIPTION_FAILED',
    `The transcription model failed: ${why}. Nothing was charged; retry.`,
    {
      cause,
    },
  );

interface VerboseJson {
  language?: string;
  duration?: number;
  segments?: { start?: number; end?: number; text?: string }[];
}

export class TranscriptionClient {
  readonly #client: OpenAI;
  readonly #config: TranscribeConfig;
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(config: TranscribeConfig) {
    this.#config = config;
    this.#client = new OpenAI({
      baseURL: config.baseURL,
      apiKey: config.apiKey ?? 'none',
      timeout: config.timeoutMs,
      maxRetries: 0,
    });
  }

  /** Transcribes the audio (already capped by the download) with at most `concurrency` calls. */
  async transcribe(audio: Uint8Array[], fileName: string): Promise<Transcription> {
    // A finishing call hands its slot to the first waiter without freeing it.
    if (this.#running >= this.#config.concurrency) {
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#running += 1;
    }
    try {
      let answer: VerboseJson;
      try {
        answer = (await this.#client.audio.transcriptions.create({
          file: await toFile(new Blob(audio as Uint8Array<ArrayBuffer>[]), fileName),
          model: this.#config.model,
          response_format: 'verbose_json',
        })) as VerboseJson;
      } catch (err) {
        throw failed(err instanceof Error ? err.message : String(err), err);
      }
      const segments = (answer.segments ?? [])
        .map((s) => ({
          start: Number(s.start ?? 0),
          duration: Math.max(0, Number(s.end ?? 0) - Number(s.start ?? 0)),
          text: String(s.text ?? '').trim(),
        }))
        .filter((s) => s.text !== '');
      if (segments.length === 0) throw noSpeech();
      return {
        language: languageCode(answer.language),
        durationSeconds: Number(answer.duration ?? 0),
        segments,
      };
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running -= 1;
    }
  }
}

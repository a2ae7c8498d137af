/** Speech-to-text through an OpenAI-compatible `/v1/audio/transcriptions` endpoint. */
import { openAsBlob } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { AppError } from '@subx/errors';
import { backoffDelay } from '@subx/ports';
import type { AudioPart } from './audio-file.ts';

export interface TranscribeConfig {
  baseURL: string;
  apiKey: string | undefined;
  model: string;
  timeoutMs: number;
  /**
   * How long one request is tried again while the endpoint is unavailable (connection refused or
   * reset, 503): an engine scaled to zero comes up, a full one frees a turn. 0 or absent: never.
   */
  unavailableWaitMs?: number;
}

/** Between tries of an unavailable endpoint: 1 s doubling to 10 s, jittered. */
const UNAVAILABLE_BACKOFF = { baseMs: 1_000, maxMs: 10_000 };

/**
 * Whether the endpoint was not there to answer: no connection (refused, reset; not a timeout, which
 * is the model's verdict) or 503 (draining, its queue full). Asked again later, it may answer.
 */
function isUnavailable(err: unknown): boolean {
  if (err instanceof APIConnectionTimeoutError) return false;
  if (err instanceof APIConnectionError) return true;
  return err instanceof APIError && err.status === 503;
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

interface TranscribedWord {
  text: string;
  start: number;
  end: number;
}

interface TranscribedSegment {
  start: number;
  duration: number;
  text: string;
  /** The engine's word timestamps inside this segment; absent when it gave none. */
  words?: TranscribedWord[];
}

export interface Transcription {
  language: string;
  durationSeconds: number;
  segments: TranscribedSegment[];
}

/**
 * Failures that are the model's verdict on the audio it was sent (no speech, an answer cut short, a
 * timeout): asked again, the model would most likely spend the same again on the same answer, so
 * they are remembered for the video (extraction-service.ts). An outage (refused connection, 5xx)
 * or a request its caller stopped is not: it says nothing about the audio.
 */
const verdicts = new WeakSet<AppError>();

/** Whether `error` is the model's verdict on the audio (see `verdicts`). */
export function isModelVerdict(error: unknown): boolean {
  return error instanceof AppError && verdicts.has(error);
}

const verdict = (error: AppError): AppError => {
  verdicts.add(error);
  return error;
};

/** The model answered no speech (no segment with text): 404 NO_SPEECH. */
const noSpeech = () =>
  verdict(
    new AppError(
      'NO_SPEECH',
      'The video has no captions and its audio holds no speech the model could transcribe.',
    ),
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

interface VerboseWord {
  word?: string;
  start?: number;
  end?: number;
}

/** OpenAI's verbose_json; some servers also nest each segment's words in it (faster-whisper). */
interface VerboseJson {
  language?: string;
  duration?: number;
  segments?: { start?: number; end?: number; text?: string; words?: VerboseWord[] }[];
  /** With timestamp_granularities word: every word of the part, in order. */
  words?: VerboseWord[];
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

/** A verbose word moved by the part's start; undefined for one without text or times. */
function wordOf(w: VerboseWord, offset: number): TranscribedWord | undefined {
  const text = String(w.word ?? '').trim();
  const start = Number(w.start);
  const end = Number(w.end);
  if (text === '' || !Number.isFinite(start) || !Number.isFinite(end)) return undefined;
  return { text, start: round3(offset + start), end: round3(offset + Math.max(start, end)) };
}

/**
 * Each segment's words: its own (`segments[].words`) where the server nests them, else the
 * part's word list shared out by time, a word going to the last segment starting before its
 * middle (OpenAI answers words beside the segments, not inside them).
 */
function attachWords(segments: TranscribedSegment[], answer: VerboseJson, offset: number): void {
  const raw = answer.segments ?? [];
  if (raw.some((s) => Array.isArray(s.words))) {
    raw.forEach((s, i) => {
      const words = (s.words ?? []).map((w) => wordOf(w, offset)).filter((w) => w !== undefined);
      const segment = segments[i];
      if (segment && words.length > 0) segment.words = words;
    });
    return;
  }
  let at = 0;
  for (const w of answer.words ?? []) {
    const word = wordOf(w, offset);
    if (!word || segments.length === 0) continue;
    const middle = (word.start + word.end) / 2;
    while (at + 1 < segments.length && segments[at + 1]!.start <= middle) at += 1;
    (segments[at]!.words ??= []).push(word);
  }
}

export class TranscriptionClient {
  readonly #client: OpenAI;
  readonly #config: TranscribeConfig;

  constructor(config: TranscribeConfig) {
    this.#config = config;
    this.#client = new OpenAI({
      baseURL: config.baseURL,
      apiKey: config.apiKey ?? 'none',
      timeout: config.timeoutMs,
      maxRetries: 0,
    });
  }

  /**
   * Transcribes the audio's parts in order, one request each: each part is uploaded from its
   * file, and its segments are moved by the part's start so that they time the whole audio.
   * (How many run at once is the caller's: AudioTranscriber bounds the download with them.)
   */
  async transcribe(
    parts: readonly AudioPart[],
    fileName: string,
    mimeType: string,
    signal?: AbortSignal,
  ): Promise<Transcription> {
    const heard: Transcription[] = [];
    for (const part of parts) heard.push(await this.#transcribePart(part, fileName, mimeType, signal));
    const segments = heard.flatMap((h) => h.segments);
    if (segments.length === 0) throw noSpeech();
    return {
      language: mostHeard(heard),
      durationSeconds: heard.reduce((sum, h) => sum + h.durationSeconds, 0),
      segments,
    };
  }

  async #transcribePart(
    part: AudioPart,
    fileName: string,
    mimeType: string,
    signal: AbortSignal | undefined,
  ): Promise<Transcription> {
    let answer: VerboseJson;
    try {
      // A disk-backed Blob: the upload streams the file instead of holding it.
      const file = new File([await openAsBlob(part.path, { type: mimeType })], fileName, { type: mimeType });
      answer = await this.#create(file, signal);
    } catch (err) {
      const failure = failed(err instanceof Error ? err.message : String(err), err);
      throw err instanceof APIConnectionTimeoutError ? verdict(failure) : failure;
    }
    const heardSeconds = Number(answer.duration ?? 0);
    if (isCutShort(heardSeconds, part.durationSeconds)) {
      throw verdict(
        failed(
          `its answer covers ${heardSeconds.toFixed(1)} s of ${part.durationSeconds.toFixed(1)} s of audio (cut short)`,
        ),
      );
    }
    const timed: TranscribedSegment[] = (answer.segments ?? []).map((s) => ({
      start: part.startSeconds + Number(s.start ?? 0),
      duration: Math.max(0, Number(s.end ?? 0) - Number(s.start ?? 0)),
      text: String(s.text ?? '').trim(),
    }));
    attachWords(timed, answer, part.startSeconds);
    const segments = timed.filter((s) => s.text !== '');
    return {
      language: languageCode(answer.language),
      durationSeconds: heardSeconds > 0 ? heardSeconds : part.durationSeconds,
      segments,
    };
  }

  /**
   * One upload's answer. While the endpoint is unavailable it is sent again, with backoff, until
   * `unavailableWaitMs` has passed or the caller stops waiting; then the last failure is thrown.
   */
  async #create(file: File, signal: AbortSignal | undefined): Promise<VerboseJson> {
    const giveUpAt = Date.now() + (this.#config.unavailableWaitMs ?? 0);
    for (let retry = 1; ; retry++) {
      try {
        return (await this.#client.audio.transcriptions.create(
          {
            file,
            model: this.#config.model,
            response_format: 'verbose_json',
            // Word times for `include: ["words"]`: asked always, so a transcript cached once serves
            // both kinds of request without the model hearing the audio again.
            timestamp_granularities: ['word', 'segment'],
          },
          signal ? { signal } : undefined,
        )) as VerboseJson;
      } catch (err) {
        const wait = Math.min(backoffDelay(UNAVAILABLE_BACKOFF, retry), giveUpAt - Date.now());
        if (!isUnavailable(err) || wait <= 0 || signal?.aborted) throw err;
        await sleep(wait, undefined, signal ? { signal } : undefined).catch(() => {
          throw err;
        });
      }
    }
  }
}

/** The language of the parts, by seconds of speech heard in each (the first part's on a tie). */
function mostHeard(parts: readonly Transcription[]): string {
  const seconds = new Map<string, number>();
  for (const part of parts) {
    if (part.segments.length === 0) continue;
    const spoken = part.segments.reduce((sum, s) => sum + s.duration, 0);
    seconds.set(part.language, (seconds.get(part.language) ?? 0) + spoken);
  }
  let best = 'und';
  let most = -1;
  for (const [language, s] of seconds) {
    if (s > most) {
      best = language;
      most = s;
    }
  }
  return best;
}

/**
 * Whether the model's answer stops well short of the audio it was sent: a model that gives up
 * halfway must not be billed as a whole transcript. Allowed: 10% or 5 s, whichever is more (the
 * platform's length and the decoder's differ by padding); not checked when either is unknown.
 */
function isCutShort(heardSeconds: number, sentSeconds: number): boolean {
  if (!(heardSeconds > 0) || !(sentSeconds > 0)) return false;
  return heardSeconds < sentSeconds - Math.max(5, sentSeconds * 0.1);
}

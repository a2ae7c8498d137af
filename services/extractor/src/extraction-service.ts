import { extractorV1 } from '@subx/contracts';
import type { commonV1 } from '@subx/contracts';
import { answerHeadJson, publicSegmentsJson } from '@subx/formats';
import type { JsonCache, LoadOptions } from '@subx/ports';
import type { YouTubeClient, VideoMetadata, MetadataField } from '@subx/youtube';
import { METADATA_FIELDS, isCaptionRefusal, isVideoId } from '@subx/youtube';
import { AppError, Errors, PROCESSING_RETRY_AFTER_SECONDS, isAppError } from '@subx/errors';
import type { AudioTranscriber } from './transcription/audio-transcriber.ts';

export interface ExtractionCacheTtl {
  /** Transcripts (default 24 h). */
  transcriptMs: number;
  /** Validation results (default 1 h). */
  validateMs: number;
  /** Playlist listings (default 10 min: playlists change more often than transcripts). */
  playlistMs: number;
}

/**
 * The call a transcript is asked on: its deadline, and a signal that aborts when its caller stops
 * waiting (read only on the paths that start model work: a stream item makes its signal on first use).
 */
export interface TranscriptCall {
  readonly deadline?: Date | undefined;
  readonly signal?: AbortSignal | undefined;
}

export interface ExtractionService {
  getTranscript(
    req: extractorV1.GetTranscriptRequest,
    call?: TranscriptCall,
  ): Promise<extractorV1.GetTranscriptResponse>;
  validateVideo(req: extractorV1.ValidateVideoRequest): Promise<extractorV1.ValidateVideoResponse>;
  getPlaylist(req: extractorV1.GetPlaylistRequest): Promise<extractorV1.GetPlaylistResponse>;
}

type YouTube = Pick<YouTubeClient, 'getTranscript' | 'validate' | 'getPlaylist' | 'getAudio'>;

/** Speech-to-text for videos without captions (config TRANSCRIBE_*). */
export interface Transcription {
  transcriber: Pick<AudioTranscriber, 'transcribe'>;
  /** The model's name: a transcript is cached per (video, model). */
  model: string;
  /**
   * How long a transcription the model failed on (no speech, an answer cut short, a timeout) is
   * remembered for the video: a repeat within it is answered the same without the model.
   */
  failureTtlMs: number;
  /**
   * A synchronous call (one with a deadline) starts model work only with at least this much of its
   * deadline left, the bound of one request to the model: work that cannot finish before its
   * caller gives up is refused up front rather than started.
   */
  minDeadlineMs: number;
  /** Whether a failure is the model's verdict on this audio (remembered), not an outage. */
  isRemembered(error: unknown): boolean;
  /** Longer videos are refused before any audio is fetched. */
  maxSeconds: number;
  /** The download stops and the request is refused (422 AUDIO_TOO_LONG) past this many bytes. */
  maxAudioBytes: number;
  /** Called with the seconds of audio of every transcription made (not of cache hits). */
  onTranscribed?: (seconds: number) => void;
}

interface CachedTranscript {
  videoId: string;
  language: string;
  subtitleType: 'manual' | 'auto_generated' | 'transcribed';
  /** Transcribed from the audio (absent: the platform's captions). */
  audioSeconds?: number;
  translatedFrom?: string;
  translatedBy?: 'platform' | 'model';
  languageConfidence?: 'low';
  segments: {
    text: string;
    start: number;
    duration: number;
    words?: { text: string; start: number; end: number }[];
  }[];
  /** The segments keep the word times their source gave (entries made before words were kept lack them). */
  wordTimes?: true;
  metadata: VideoMetadata;
  fetchedAt: string;
}

/** Why mode auto transcribed the audio instead of reading captions (docs/api.md "Transcription"). */
type FallbackReason = 'captions_refused' | 'no_captions' | 'language_not_available';

/** `include` names that are no metadata field: `words` asks each segment's word times. */
const WORDS = 'words';

/** A request's `include`: the metadata fields, sorted (the cache keys hold them), and `words`. */
interface Include {
  fields: MetadataField[];
  words: boolean;
}

/**
 * Why a validation is `valid: false` (proto ValidateVideoResponse.invalid_reason): the platform's
 * VIDEO_UNAVAILABLE reason (private, members_only, …), else video_not_found.
 */
function invalidReasonOf(error: AppError): string {
  return error.code === 'VIDEO_UNAVAILABLE' && error.reason ? error.reason : 'video_not_found';
}

/** A remembered failure, answered again without the model until it is forgotten. */
function rememberedError(failure: RememberedFailure): AppError {
  const seconds = Math.max(1, Math.ceil((failure.until - Date.now()) / 1000));
  return new AppError(
    failure.code,
    `${failure.message} (This answer is remembered for the video for ${seconds} s more; nothing was sent to the model.)`,
    failure.code === 'TRANSCRIPTION_FAILED' ? { retryAfterSeconds: seconds } : {},
  );
}

/** 422: the caller's deadline is too near for model work to finish inside it: a job instead. */
function noTimeToTranscribe(leftMs: number, neededMs: number): AppError {
  return new AppError(
    'AUDIO_TOO_LONG',
    `This request leaves ${Math.max(0, Math.round(leftMs / 1000))} s for a transcription that may take ${Math.round(neededMs / 1000)} s; ` +
      'nothing was started. Create a bulk job instead (POST /api/v1/jobs with "mode"): jobs transcribe without a deadline per request.',
  );
}

/** A language code, or `original`: the language the video is spoken in. */
const LANGUAGE = /^(?:original|[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*)$/;

function normaliseInclude(include: readonly string[]): Include {
  const valid = new Set<string>(METADATA_FIELDS);
  const bad = include.filter((f) => !valid.has(f) && f !== WORDS);
  if (bad.length > 0) throw Errors.invalidInclude(bad, [...METADATA_FIELDS, WORDS]);
  const fields = [...new Set(include)].filter((f) => f !== WORDS).sort() as MetadataField[];
  return { fields, words: include.includes(WORDS) };
}

/** The proto segments of an answer: each with its words when asked, else none. */
function protoSegments(value: CachedTranscript, words: boolean): commonV1.Segment[] {
  return value.segments.map((s) => ({
    text: s.text,
    start: s.start,
    duration: s.duration,
    words: words ? (s.words ?? []) : [],
  }));
}

export function toProtoMetadata(m: VideoMetadata): commonV1.VideoMetadata {
  return {
    title: m.title,
    channel: m.channel,
    channelId: m.channelId,
    duration: m.duration,
    uploadDate: m.uploadDate,
    thumbnailUrl: m.thumbnailUrl,
    description: m.description,
    tags: m.tags === undefined ? undefined : { values: m.tags },
    categories: m.categories === undefined ? undefined : { values: m.categories },
    viewCount: m.viewCount === undefined ? undefined : BigInt(m.viewCount),
    likeCount: m.likeCount === undefined ? undefined : BigInt(m.likeCount),
    commentCount: m.commentCount === undefined ? undefined : BigInt(m.commentCount),
    chapters:
      m.chapters === undefined
        ? undefined
        : { values: m.chapters.map((c) => ({ title: c.title, startTime: c.startTime })) },
    isLive: m.isLive,
    wasLive: m.wasLive,
  };
}

const SUBTITLE_TYPE = { manual: 1, auto_generated: 2, transcribed: 3 } as const;

/**
 * How an answer carries its segments and, in 'segmentsJsonUtf8AndHead', the json answer's members
 * before them instead of the metadata: GetTranscriptRequest.answer_json asks that form; the
 * deprecated segments_as_json, segments_json_as_bytes and head_json_as_bytes (gateways of the
 * previous release) ask it or the forms in between, as they always did.
 */
type SegmentsForm = 'segments' | 'segmentsJson' | 'segmentsJsonUtf8' | 'segmentsJsonUtf8AndHead';

function segmentsFormOf(req: extractorV1.GetTranscriptRequest): SegmentsForm {
  if (req.answerJson) return 'segmentsJsonUtf8AndHead';
  if (!req.segmentsAsJson) return 'segments';
  if (!req.segmentsJsonAsBytes) return 'segmentsJson';
  return req.headJsonAsBytes ? 'segmentsJsonUtf8AndHead' : 'segmentsJsonUtf8';
}

const NO_BYTES = Buffer.alloc(0);

/** What a transcription the model failed on is remembered as (Transcription.failureTtlMs). */
interface RememberedFailure {
  code: 'NO_SPEECH' | 'TRANSCRIPTION_FAILED';
  message: string;
  /** Epoch ms. */
  until: number;
}

/** The opt-in metadata fields and the VideoMetadata members that hold them. */
const OPT_IN_MEMBERS: Record<MetadataField, keyof VideoMetadata> = {
  description: 'description',
  tags: 'tags',
  categories: 'categories',
  view_count: 'viewCount',
  like_count: 'likeCount',
  comment_count: 'commentCount',
  chapters: 'chapters',
  is_live: 'isLive',
  was_live: 'wasLive',
};

/**
 * The metadata a request with `include` is answered: a transcribed value is cached per video with
 * every opt-in field, and each request sees the ones it asked for.
 */
function metadataFor(metadata: VideoMetadata, include: readonly MetadataField[]): VideoMetadata {
  const shown: Partial<VideoMetadata> = { ...metadata };
  for (const field of METADATA_FIELDS) if (!include.includes(field)) delete shown[OPT_IN_MEMBERS[field]];
  return shown as VideoMetadata;
}

/**
 * The hit answers of each cached value (`cached: true`), one per segments form, made once. The
 * cache hands out the same (frozen) value while its entry is unchanged (createJsonCache's
 * decodedEntries), so a hot transcript's answer is built once, and, frozen, encoded once too
 * (grpc/answer-encoding.ts); a value the cache no longer holds is collected with its answers.
 */
const hitAnswers = new WeakMap<CachedTranscript, Map<string, extractorV1.GetTranscriptResponse>>();

/**
 * `include` is the request's normalised set: a caption value's key holds it; a transcribed value
 * holds every opt-in field and is answered with the ones asked (metadataFor).
 */
function answerOf(
  value: CachedTranscript,
  cached: boolean,
  form: SegmentsForm,
  include: readonly MetadataField[],
  words: boolean,
): extractorV1.GetTranscriptResponse {
  const variant = `${form}${words ? '+words' : ''}:${include.join(',')}`;
  const shared = cached ? hitAnswers.get(value)?.get(variant) : undefined;
  if (shared) return shared;
  const json = form === 'segments' ? '' : publicSegmentsJson(value.segments, words);
  const metadata = toProtoMetadata(
    value.audioSeconds === undefined ? value.metadata : metadataFor(value.metadata, include),
  );
  const withHead = form === 'segmentsJsonUtf8AndHead';
  const answer: extractorV1.GetTranscriptResponse = {
    videoId: value.videoId,
    language: value.language,
    subtitleType: SUBTITLE_TYPE[value.subtitleType],
    segments: form === 'segments' ? protoSegments(value, words) : [],
    // In the head instead (answer_json): the gateway does not decode it.
    metadata: withHead ? undefined : metadata,
    cached,
    fetchedAt: value.fetchedAt,
    translatedFrom: value.translatedFrom,
    translatedBy: value.translatedBy ?? (value.translatedFrom ? 'platform' : undefined),
    languageConfidence: value.languageConfidence,
    source: value.audioSeconds === undefined ? 'captions' : 'audio',
    audioSeconds: value.audioSeconds ?? 0,
    fallbackReason: '',
    upstreamReason: '',
    segmentsJson: form === 'segmentsJson' ? json : '',
    segmentsJsonUtf8: form === 'segmentsJson' || form === 'segments' ? NO_BYTES : Buffer.from(json),
    headJsonUtf8: withHead
      ? Buffer.from(
          answerHeadJson({
            videoId: value.videoId,
            metadata,
            include,
            language: value.language,
            subtitleType: value.subtitleType,
          }),
        )
      : NO_BYTES,
  };
  if (!cached) return answer;
  // Shared by every hit of this value: frozen, like the value itself.
  if (answer.metadata) Object.freeze(answer.metadata);
  Object.freeze(answer);
  const answers = hitAnswers.get(value) ?? new Map<string, extractorV1.GetTranscriptResponse>();
  answers.set(variant, answer);
  hitAnswers.set(value, answers);
  return answer;
}

/**
 * Transcripts, validation and playlists with caching. Cache keys: a transcript is cached per
 * (video, requested language, translate flag, opt-in metadata set) so that `cached: true` always
 * means the whole answer came from the cache; `force_refresh` skips the read and rewrites the
 * entry. Concurrent identical cold requests share one upstream fetch (single-flight in the cache
 * and coalescing in the client).
 */
export function createExtractionService(deps: {
  youtube: YouTube;
  cache: JsonCache;
  ttl: ExtractionCacheTtl;
  clock?: { now(): number };
  /** Speech-to-text for `mode` auto and transcribe; absent: 422 TRANSCRIPTION_NOT_CONFIGURED. */
  transcription?: Transcription;
}): ExtractionService {
  const { youtube, cache, ttl } = deps;
  const clock = deps.clock ?? { now: () => Date.now() };

  /**
   * The video's audio transcribed: cached per (video, model) whatever language or metadata was
   * asked (the model says which language it heard; every opt-in field is kept, each request sees
   * its own), and loaded once for concurrent requests (the cache's single flight), so a repeat or
   * another format never pays the model again. The load is stopped (download and model request)
   * when every caller waiting for it has left; a failure that is the model's verdict on the audio
   * is remembered for the video (Transcription.failureTtlMs), force_refresh or not.
   */
  async function transcribed(
    req: extractorV1.GetTranscriptRequest,
    { fields: include, words }: Include,
    call: TranscriptCall,
  ): Promise<extractorV1.GetTranscriptResponse> {
    const transcription = deps.transcription;
    if (!transcription) {
      throw new AppError(
        'TRANSCRIPTION_NOT_CONFIGURED',
        'The video has no captions to read, and this deployment transcribes no audio (TRANSCRIBE_BASE_URL is unset).',
      );
    }
    const key = `transcript:v2:audio:${req.videoId}:${transcription.model}`;
    const failedKey = `transcript:v2:audio-failed:${req.videoId}:${transcription.model}`;
    const remembered = await cache.get<RememberedFailure>(failedKey).catch(() => null);
    if (remembered) throw rememberedError(remembered);
    const { value, cached } = await cachedTranscript(
      key,
      async (signal) => {
        // Only the call that starts the work is asked whether it has the time for it.
        const left = call.deadline ? call.deadline.getTime() - Date.now() : Infinity;
        if (left < transcription.minDeadlineMs) throw noTimeToTranscribe(left, transcription.minDeadlineMs);
        const audio = await youtube.getAudio({
          videoId: req.videoId,
          // Every field: the value is shared by requests asking any of them.
          include: [...METADATA_FIELDS],
          // The caller's cap (the key's tier) under the deployment's ceiling.
          maxSeconds:
            req.maxAudioSeconds > 0
              ? Math.min(req.maxAudioSeconds, transcription.maxSeconds)
              : transcription.maxSeconds,
          maxBytes: transcription.maxAudioBytes,
          signal,
        });
        let heard;
        try {
          heard = await transcription.transcriber.transcribe(audio, {
            signal,
            account: req.accountId,
            ...(call.deadline ? { deadline: call.deadline, minLeftMs: transcription.minDeadlineMs } : {}),
          });
        } catch (err) {
          if (transcription.isRemembered(err) && isAppError(err)) {
            const failure: RememberedFailure = {
              code: err.code === 'NO_SPEECH' ? 'NO_SPEECH' : 'TRANSCRIPTION_FAILED',
              message: err.message,
              until: Date.now() + transcription.failureTtlMs,
            };
            await cache.set(failedKey, failure, transcription.failureTtlMs).catch(() => undefined);
          }
          throw err;
        }
        // The model's count, else the platform's length (the transcriber falls back per part).
        const seconds = Math.ceil(heard.durationSeconds);
        transcription.onTranscribed?.(seconds);
        return {
          videoId: req.videoId,
          language: heard.language,
          subtitleType: 'transcribed',
          audioSeconds: seconds,
          segments: heard.segments,
          wordTimes: true,
          metadata: audio.metadata,
          fetchedAt: new Date(clock.now()).toISOString(),
        };
      },
      { forceRefresh: req.forceRefresh, signal: call.signal },
      words,
    );
    return answerOf(value, cached, segmentsFormOf(req), include, words);
  }

  /** The platform's captions (mode captions, and auto first). */
  async function captions(
    req: extractorV1.GetTranscriptRequest,
    language: string,
    { fields: include, words }: Include,
    call: TranscriptCall,
  ): Promise<extractorV1.GetTranscriptResponse> {
    const key = `transcript:v1:${req.videoId}:${language}:${req.translate ? 't' : 'o'}:${include.join(',')}`;
    const { value, cached } = await cachedTranscript(
      key,
      async (signal) => {
        const t = await youtube.getTranscript({
          videoId: req.videoId,
          language,
          translate: req.translate,
          include,
          // A translation by a model stops when nobody waits for it any more.
          ...(req.translate ? { signal } : {}),
          words: true,
        });
        return {
          videoId: t.videoId,
          language: t.language,
          subtitleType: t.subtitleType,
          ...(t.translatedFrom === undefined ? {} : { translatedFrom: t.translatedFrom }),
          ...(t.translatedBy === undefined ? {} : { translatedBy: t.translatedBy }),
          ...(t.languageConfidence === undefined ? {} : { languageConfidence: t.languageConfidence }),
          segments: t.segments,
          wordTimes: true,
          metadata: t.metadata,
          fetchedAt: new Date(clock.now()).toISOString(),
        };
      },
      // Only a translation may start model work: only then is the caller's signal read.
      { forceRefresh: req.forceRefresh, ...(req.translate ? { signal: call.signal } : {}) },
      words,
    );
    return answerOf(value, cached, segmentsFormOf(req), include, words);
  }

  /**
   * A transcript from the cache or loaded. Word times are kept whether asked or not, so one entry
   * answers both kinds of request; an entry made before they were kept cannot answer `words` and
   * is made again, once.
   */
  async function cachedTranscript(
    key: string,
    load: (signal: AbortSignal) => Promise<CachedTranscript>,
    options: LoadOptions,
    words: boolean,
  ): Promise<{ value: CachedTranscript; cached: boolean }> {
    const got = await cache.getOrLoad<CachedTranscript>(key, ttl.transcriptMs, load, options);
    if (!words || got.value.wordTimes) return got;
    return cache.getOrLoad<CachedTranscript>(key, ttl.transcriptMs, load, { ...options, forceRefresh: true });
  }

  /** Mode auto: the captions, else (none, none in the language, or refused) the audio, saying why. */
  async function captionsOrAudio(
    req: extractorV1.GetTranscriptRequest,
    language: string,
    include: Include,
    call: TranscriptCall,
  ): Promise<extractorV1.GetTranscriptResponse> {
    let fallbackReason: FallbackReason;
    let upstreamReason = '';
    try {
      return await captions(req, language, include, call);
    } catch (err) {
      if (isCaptionRefusal(err)) {
        // Where nothing transcribes, the platform's refusal is the truer answer.
        if (!deps.transcription) throw err;
        fallbackReason = 'captions_refused';
        upstreamReason = err.reason ?? '';
      } else if (isAppError(err) && err.code === 'NO_SUBTITLES') {
        fallbackReason = 'no_captions';
      } else if (isAppError(err) && err.code === 'LANGUAGE_NOT_AVAILABLE') {
        fallbackReason = 'language_not_available';
      } else {
        throw err;
      }
    }
    // A shared (frozen) answer is copied: the reason belongs to this request, not to the entry.
    return { ...(await transcribed(req, include, call)), fallbackReason, upstreamReason };
  }

  return {
    async getTranscript(req, call = {}) {
      if (!isVideoId(req.videoId)) throw Errors.invalidUrl();
      const language = req.language || 'en';
      if (!LANGUAGE.test(language))
        throw Errors.invalidRequest(`language '${language}' is not a language code`);
      const include = normaliseInclude(req.include);
      if (req.mode === extractorV1.TranscriptMode.TRANSCRIPT_MODE_TRANSCRIBE)
        return transcribed(req, include, call);
      if (req.mode === extractorV1.TranscriptMode.TRANSCRIPT_MODE_AUTO)
        return captionsOrAudio(req, language, include, call);
      return captions(req, language, include, call);
    },

    async validateVideo(req) {
      if (!isVideoId(req.videoId)) throw Errors.invalidUrl();
      // A video that does not exist or cannot be read is a valid answer (valid: false), cached too,
      // with why (v2: the entries of v1 did not keep it).
      const key = `validate:v2:${req.videoId}`;
      const { value, cached } = await cache.getOrLoad(key, ttl.validateMs, async () => {
        const { error, ...validation } = await youtube.validate(req.videoId);
        return { ...validation, invalidReason: error ? invalidReasonOf(error) : '' };
      });
      // captions that are only pending (a stream live or in processing) are asked again sooner
      if (!cached && value.captionsPending) {
        const pendingMs = PROCESSING_RETRY_AFTER_SECONDS[value.captionsPending] * 1000;
        await cache.set(key, value, Math.min(ttl.validateMs, pendingMs)).catch(() => undefined);
      }
      return {
        valid: value.valid,
        hasSubtitles: value.hasSubtitles,
        manualLanguages: value.manualLanguages,
        autoGeneratedLanguages: value.autoGeneratedLanguages,
        videoTitle: value.title,
        duration: value.duration,
        cached,
        invalidReason: value.invalidReason,
        captionsPending: value.captionsPending ?? '',
      };
    },

    async getPlaylist(req) {
      const max = req.maxVideos > 0 ? req.maxVideos : 10;
      if (max > 25) throw Errors.invalidRequest('max_videos must be between 1 and 25');
      if (!/^[A-Za-z0-9_-]{10,64}$/.test(req.playlistId))
        throw Errors.invalidUrl('The URL is not an accepted playlist URL.');
      const { value } = await cache.getOrLoad(`playlist:v1:${req.playlistId}:${max}`, ttl.playlistMs, () =>
        youtube.getPlaylist(req.playlistId, max),
      );
      return {
        playlistId: value.playlistId,
        title: value.title,
        uploader: value.uploader,
        totalVideos: value.totalVideos,
        videoIds: value.videoIds.slice(0, max),
      };
    },
  };
}

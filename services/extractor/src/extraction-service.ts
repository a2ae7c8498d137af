import { extractorV1 } from '@subx/contracts';
import type { commonV1 } from '@subx/contracts';
import { answerHeadJson, publicSegmentsJson } from '@subx/formats';
import type { JsonCache } from '@subx/ports';
import type { YouTubeClient, VideoMetadata, MetadataField } from '@subx/youtube';
import { METADATA_FIELDS, isCaptionRefusal, isVideoId } from '@subx/youtube';
import { AppError, Errors, isAppError } from '@subx/errors';
import type { AudioTranscriber } from './transcription/audio-transcriber.ts';

export interface ExtractionCacheTtl {
  /** Transcripts (default 24 h). */
  transcriptMs: number;
  /** Validation results (default 1 h). */
  validateMs: number;
  /** Playlist listings (default 10 min: playlists change more often than transcripts). */
  playlistMs: number;
}

export interface ExtractionService {
  getTranscript(req: extractorV1.GetTranscriptRequest): Promise<extractorV1.GetTranscriptResponse>;
  validateVideo(req: extractorV1.ValidateVideoRequest): Promise<extractorV1.ValidateVideoResponse>;
  getPlaylist(req: extractorV1.GetPlaylistRequest): Promise<extractorV1.GetPlaylistResponse>;
}

type YouTube = Pick<YouTubeClient, 'getTranscript' | 'validate' | 'getPlaylist' | 'getAudio'>;

/** Speech-to-text for videos without captions (config TRANSCRIBE_*). */
export interface Transcription {
  transcriber: Pick<AudioTranscriber, 'transcribe'>;
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

/**
 * The hit answers of each cached value (`cached: true`), one per segments form, made once. The
 * cache hands out the same (frozen) value while its entry is unchanged (createJsonCache's
 * decodedEntries), so a hot transcript's answer is built once, and, frozen, encoded once too
 * (grpc/answer-encoding.ts); a value the cache no longer holds is collected with its answers.
 */
const hitAnswers = new WeakMap<
  CachedTranscript,
  Partial<Record<string, extractorV1.GetTranscriptResponse>>
>();

/**
 * `include` is the request's normalised set, the one the value's cache key holds: a value's head
 * is the same for every request that reads it.
 */
function answerOf(
  value: CachedTranscript,
  cached: boolean,
  form: SegmentsForm,
  include: readonly MetadataField[],
  words: boolean,
): extractorV1.GetTranscriptResponse {
  const shape = words ? `${form}+words` : form;
  const shared = cached ? hitAnswers.get(value)?.[shape] : undefined;
  if (shared) return shared;
  const json = form === 'segments' ? '' : publicSegmentsJson(value.segments, words);
  const metadata = toProtoMetadata(value.metadata);
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
  const answers = hitAnswers.get(value) ?? {};
  answers[shape] = answer;
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
   * The video's audio transcribed: cached per (video, opt-in metadata) whatever language was
   * asked (the model says which it heard), and loaded once for concurrent requests (the cache's
   * single flight), so a repeat or another format never pays the model again.
   */
  async function transcribed(
    req: extractorV1.GetTranscriptRequest,
    { fields: include, words }: Include,
  ): Promise<extractorV1.GetTranscriptResponse> {
    const transcription = deps.transcription;
    if (!transcription) {
      throw new AppError(
        'TRANSCRIPTION_NOT_CONFIGURED',
        'The video has no captions to read, and this deployment transcribes no audio (TRANSCRIBE_BASE_URL is unset).',
      );
    }
    const key = `transcript:v1:audio:${req.videoId}:${include.join(',')}`;
    const { value, cached } = await cachedTranscript(
      key,
      async () => {
        const audio = await youtube.getAudio({
          videoId: req.videoId,
          include,
          // The caller's cap (the key's tier) under the deployment's ceiling.
          maxSeconds:
            req.maxAudioSeconds > 0
              ? Math.min(req.maxAudioSeconds, transcription.maxSeconds)
              : transcription.maxSeconds,
          maxBytes: transcription.maxAudioBytes,
        });
        const heard = await transcription.transcriber.transcribe(audio);
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
      req.forceRefresh,
      words,
    );
    return answerOf(value, cached, segmentsFormOf(req), include, words);
  }

  /** The platform's captions (mode captions, and auto first). */
  async function captions(
    req: extractorV1.GetTranscriptRequest,
    language: string,
    { fields: include, words }: Include,
  ): Promise<extractorV1.GetTranscriptResponse> {
    const key = `transcript:v1:${req.videoId}:${language}:${req.translate ? 't' : 'o'}:${include.join(',')}`;
    const { value, cached } = await cachedTranscript(
      key,
      async () => {
        const t = await youtube.getTranscript({
          videoId: req.videoId,
          language,
          translate: req.translate,
          include,
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
      req.forceRefresh,
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
    load: () => Promise<CachedTranscript>,
    forceRefresh: boolean,
    words: boolean,
  ): Promise<{ value: CachedTranscript; cached: boolean }> {
    const got = await cache.getOrLoad<CachedTranscript>(key, ttl.transcriptMs, load, { forceRefresh });
    if (!words || got.value.wordTimes) return got;
    return cache.getOrLoad<CachedTranscript>(key, ttl.transcriptMs, load, { forceRefresh: true });
  }

  /** Mode auto: the captions, else (none, none in the language, or refused) the audio, saying why. */
  async function captionsOrAudio(
    req: extractorV1.GetTranscriptRequest,
    language: string,
    include: Include,
  ): Promise<extractorV1.GetTranscriptResponse> {
    let fallbackReason: FallbackReason;
    let upstreamReason = '';
    try {
      return await captions(req, language, include);
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
    return { ...(await transcribed(req, include)), fallbackReason, upstreamReason };
  }

  return {
    async getTranscript(req) {
      if (!isVideoId(req.videoId)) throw Errors.invalidUrl();
      const language = req.language || 'en';
      if (!LANGUAGE.test(language))
        throw Errors.invalidRequest(`language '${language}' is not a language code`);
      const include = normaliseInclude(req.include);
      if (req.mode === extractorV1.TranscriptMode.TRANSCRIPT_MODE_TRANSCRIBE)
        return transcribed(req, include);
      if (req.mode === extractorV1.TranscriptMode.TRANSCRIPT_MODE_AUTO)
        return captionsOrAudio(req, language, include);
      return captions(req, language, include);
    },

    async validateVideo(req) {
      if (!isVideoId(req.videoId)) throw Errors.invalidUrl();
      // A video that does not exist or cannot be read is a valid answer (valid: false), cached too,
      // with why (v2: the entries of v1 did not keep it).
      const { value, cached } = await cache.getOrLoad(
        `validate:v2:${req.videoId}`,
        ttl.validateMs,
        async () => {
          const { error, ...validation } = await youtube.validate(req.videoId);
          return { ...validation, invalidReason: error ? invalidReasonOf(error) : '' };
        },
      );
      return {
        valid: value.valid,
        hasSubtitles: value.hasSubtitles,
        manualLanguages: value.manualLanguages,
        autoGeneratedLanguages: value.autoGeneratedLanguages,
        videoTitle: value.title,
        duration: value.duration,
        cached,
        invalidReason: value.invalidReason,
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

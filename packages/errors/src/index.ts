/**
 * The one error taxonomy of the system. Every failure a caller can see has a stable code from
 * this catalogue; the HTTP status, the gRPC status and `retryable` are derived from it, never
 * chosen at the throw site. The public table of codes, statuses and retryability: docs/api.md ("Errors").
 */

import { networkCauseOf } from './network-cause.ts';
import { isAre, plural } from './plural.ts';

export { isAre, plural } from './plural.ts';
export { networkCauseOf, type NetworkCause } from './network-cause.ts';

/** gRPC status numbers (grpc.status), kept here so this package has no runtime dependency. */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

interface CatalogEntry {
  readonly status: number;
  readonly grpc: number;
  readonly retryable: boolean;
  /** One line for the error reference page (/docs/errors). */
  readonly summary: string;
}

export const ERROR_CATALOG = {
  INVALID_REQUEST: {
    status: 400,
    grpc: GrpcStatus.INVALID_ARGUMENT,
    retryable: false,
    summary: 'Malformed JSON, a parameter of the wrong type, out of range, unknown, or not allowed.',
  },
  INVALID_URL: {
    status: 400,
    grpc: GrpcStatus.INVALID_ARGUMENT,
    retryable: false,
    summary: 'The URL is not an accepted video, playlist or channel URL.',
  },
  INVALID_INCLUDE: {
    status: 400,
    grpc: GrpcStatus.INVALID_ARGUMENT,
    retryable: false,
    summary: 'An `include` name is not one of the nine opt-in metadata fields; the message lists them.',
  },
  NOT_ENOUGH_COMMENTS: {
    status: 400,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    retryable: false,
    summary: 'Comment analysis needs at least 10 comments on the video.',
  },
  UNAUTHORIZED: {
    status: 401,
    grpc: GrpcStatus.UNAUTHENTICATED,
    retryable: false,
    summary:
      'No API key (`X-API-Key: <key>` or `Authorization: Bearer <key>`), or the key is wrong, regenerated or revoked. The answer carries `WWW-Authenticate`.',
  },
  INSUFFICIENT_CREDITS: {
    status: 402,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    retryable: false,
    summary: 'The credit balance is below what the request may cost; the message names both amounts.',
  },
  TIER_REQUIRED: {
    status: 403,
    grpc: GrpcStatus.PERMISSION_DENIED,
    retryable: false,
    summary: 'The operation needs a higher tier; the message names it.',
  },
  INSUFFICIENT_SCOPE: {
    status: 403,
    grpc: GrpcStatus.PERMISSION_DENIED,
    retryable: false,
    summary:
      'The API key lacks the scope the operation needs; `required_scope` names it (a key with more scopes, or the primary key, can make the call).',
  },
  SOURCE_NOT_ALLOWED: {
    status: 403,
    grpc: GrpcStatus.PERMISSION_DENIED,
    retryable: false,
    summary: "The call came from outside the API key's allowed source networks (`allowed_cidrs`).",
  },
  NOT_FOUND: {
    status: 404,
    grpc: GrpcStatus.NOT_FOUND,
    retryable: false,
    summary: 'No such route or resource.',
  },
  VIDEO_NOT_FOUND: {
    status: 404,
    grpc: GrpcStatus.NOT_FOUND,
    retryable: false,
    summary: 'No video exists with this id.',
  },
  VIDEO_UNAVAILABLE: {
    status: 404,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    retryable: false,
    summary:
      'The video exists but cannot be read: `error.reason` is private, members_only, paid, geo_blocked, age_restricted, upcoming_live or unplayable.',
  },
  NO_SUBTITLES: {
    status: 404,
    grpc: GrpcStatus.NOT_FOUND,
    retryable: false,
    summary: 'The video has no subtitles at all.',
  },
  VIDEO_PROCESSING: {
    status: 503,
    grpc: GrpcStatus.UNAVAILABLE,
    retryable: true,
    summary:
      'A live stream has no captions yet: `error.reason` is post_live (it has ended and the platform is still processing it) or live (still live; captions come once it has ended). Retry after Retry-After.',
  },
  NO_SPEECH: {
    status: 404,
    grpc: GrpcStatus.NOT_FOUND,
    retryable: false,
    summary:
      'The video has no captions and its audio holds no speech the model could transcribe (silence or music only).',
  },
  AUDIO_TOO_LONG: {
    status: 422,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    retryable: false,
    summary:
      'The video is longer than its tier or this deployment transcribes (`transcribeMaxSeconds`, `TRANSCRIBE_MAX_SECONDS`; extract: `TRANSCRIBE_SYNC_MAX_SECONDS`, longer audio goes to a bulk job), or its audio is larger than this deployment downloads.',
  },
  LANGUAGE_NOT_AVAILABLE: {
    status: 404,
    grpc: GrpcStatus.NOT_FOUND,
    retryable: false,
    summary: 'Subtitles exist but not in the requested language; the message lists the available ones.',
  },
  PLAYLIST_NOT_FOUND: {
    status: 404,
    grpc: GrpcStatus.NOT_FOUND,
    retryable: false,
    summary: 'No such playlist, or it is private.',
  },
  CHANNEL_NOT_FOUND: {
    status: 404,
    grpc: GrpcStatus.NOT_FOUND,
    retryable: false,
    summary:
      'No channel at this URL, or it cannot be listed: `error.reason` is not_found, terminated or age_restricted.',
  },
  JOB_NOT_FOUND: {
    status: 404,
    grpc: GrpcStatus.NOT_FOUND,
    retryable: false,
    summary: 'No job with this id belongs to the key’s account (or it expired and was removed).',
  },
  JOB_EXPIRED: {
    status: 410,
    grpc: GrpcStatus.NOT_FOUND,
    retryable: false,
    summary:
      'The job’s results were kept until its `expires_at` and are gone; the job itself can still be read.',
  },
  JOB_FINISHED: {
    status: 409,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    retryable: false,
    summary: 'The job already completed or failed, so it cannot be canceled.',
  },
  COMMENTS_DISABLED: {
    status: 404,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    retryable: false,
    summary: 'Comment analysis on a video whose comments are turned off.',
  },
  METHOD_NOT_ALLOWED: {
    status: 405,
    grpc: GrpcStatus.UNIMPLEMENTED,
    retryable: false,
    summary: 'The route exists but not with this HTTP method; the Allow header lists the methods.',
  },
  REQUEST_TIMEOUT: {
    status: 408,
    grpc: GrpcStatus.DEADLINE_EXCEEDED,
    retryable: true,
    summary: 'The client did not finish sending the request in time.',
  },
  CONFLICT: {
    status: 409,
    grpc: GrpcStatus.ABORTED,
    retryable: true,
    summary: 'A request with the same Idempotency-Key is still in progress.',
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    grpc: GrpcStatus.INVALID_ARGUMENT,
    retryable: false,
    summary: 'The request body is larger than the route accepts (64 KB; 1 MB for POST /api/v1/jobs).',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    grpc: GrpcStatus.INVALID_ARGUMENT,
    retryable: false,
    summary: 'The request body must be application/json.',
  },
  URI_TOO_LONG: {
    status: 414,
    grpc: GrpcStatus.INVALID_ARGUMENT,
    retryable: false,
    summary: 'The request URL is longer than 8 KB; send long inputs in a POST body.',
  },
  HEADERS_TOO_LARGE: {
    status: 431,
    grpc: GrpcStatus.INVALID_ARGUMENT,
    retryable: false,
    summary: 'The request headers are larger than 16 KB together.',
  },
  RATE_LIMITED: {
    status: 429,
    grpc: GrpcStatus.RESOURCE_EXHAUSTED,
    retryable: true,
    summary:
      'The daily request limit of the key, or the per-IP limit of an open route, is reached. See Retry-After.',
  },
  INTERNAL_ERROR: {
    status: 500,
    grpc: GrpcStatus.INTERNAL,
    retryable: true,
    summary: 'Something unexpected failed on our side. Report the request_id.',
  },
  METHOD_NOT_IMPLEMENTED: {
    status: 501,
    grpc: GrpcStatus.UNIMPLEMENTED,
    retryable: false,
    summary: 'The request method is not an HTTP method this server knows (for example a misspelled one).',
  },
  TRANSCRIPTION_NOT_CONFIGURED: {
    status: 422,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    retryable: false,
    summary:
      '`mode` auto or transcribe needed the audio transcribed, and this deployment has no transcription endpoint (`TRANSCRIBE_BASE_URL`).',
  },
  TRANSCRIPTION_FAILED: {
    status: 502,
    grpc: GrpcStatus.UNAVAILABLE,
    retryable: true,
    summary: 'The transcription model failed, timed out or cut its answer short; nothing was charged. Retry.',
  },
  EMBEDDINGS_NOT_CONFIGURED: {
    status: 422,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    retryable: false,
    summary:
      '`embed: true` was asked for and this deployment has no embeddings endpoint (`EMBEDDINGS_BASE_URL`).',
  },
  UPSTREAM_ERROR: {
    status: 502,
    grpc: GrpcStatus.INTERNAL,
    retryable: true,
    summary:
      'The video platform answered something we could not parse, or an upstream (the platform, its audio host) could not be reached: a failed DNS lookup, a refused or reset connection, a TLS error.',
  },
  SERVICE_UNAVAILABLE: {
    status: 503,
    grpc: GrpcStatus.UNAVAILABLE,
    retryable: true,
    summary: 'One of our internal services is not reachable right now.',
  },
  UPSTREAM_BLOCKED: {
    status: 503,
    grpc: GrpcStatus.UNAVAILABLE,
    retryable: true,
    summary:
      'The video platform refused us (`error.reason`: bot_check, captcha, http_429, rate_limited, page_reload, login_required, po_token, empty_caption_body), or we are leaving it alone for a while after repeated refusals (cooling_down, with Retry-After) or to stay under the request rates that get an address blocked (paced, with Retry-After). Retry later.',
  },
  UPSTREAM_TIMEOUT: {
    status: 504,
    grpc: GrpcStatus.DEADLINE_EXCEEDED,
    retryable: true,
    summary: 'The video platform did not answer in time.',
  },
  TIMEOUT: {
    status: 504,
    grpc: GrpcStatus.DEADLINE_EXCEEDED,
    retryable: true,
    summary: 'A batch or playlist item was not finished before the request deadline.',
  },
} as const satisfies Record<string, CatalogEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export const ERROR_CODES = Object.keys(ERROR_CATALOG) as ErrorCode[];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CATALOG, value);
}

/** Why a video that exists cannot be read: VIDEO_UNAVAILABLE's `reason`, and validate's. */
export const UNAVAILABLE_REASONS = [
  'private',
  'members_only',
  'paid',
  'geo_blocked',
  'age_restricted',
  'upcoming_live',
  'removed',
  'unplayable',
] as const;
export type UnavailableReason = (typeof UNAVAILABLE_REASONS)[number];

/** Why a video's captions are not there yet: VIDEO_PROCESSING's `reason`. */
export const PROCESSING_REASONS = ['post_live', 'live'] as const;
export type ProcessingReason = (typeof PROCESSING_REASONS)[number];

/**
 * When to ask again: a stream's processing takes minutes to hours after it ends, and a live stream
 * runs on for longer still.
 */
export const PROCESSING_RETRY_AFTER_SECONDS: Record<ProcessingReason, number> = { post_live: 300, live: 900 };

export type BlockedReason =
  | 'bot_check'
  | 'captcha'
  | 'http_429'
  | 'po_token'
  | 'empty_caption_body'
  | 'rate_limited'
  /** "The page needs to be reloaded": a session/IP signal, not unavailability. */
  | 'page_reload'
  /** LOGIN_REQUIRED that is neither age nor privacy: a session/IP signal. */
  | 'login_required'
  /** Our own circuit breaker: the platform blocked us repeatedly, so we wait before calling it again. */
  | 'cooling_down'
  /** Our own pacing: this egress's request budget is spent for longer than a request may wait. */
  | 'paced';

export interface AppErrorOptions {
  /** Machine-readable refinement, e.g. the VIDEO_UNAVAILABLE reason. Public. */
  reason?: string;
  /** Extra public fields (never secrets, never internals). */
  details?: Record<string, unknown>;
  cause?: unknown;
  /** Override for Retry-After (seconds) on 429/503. */
  retryAfterSeconds?: number;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly reason: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.reason = options.reason;
    this.details = options.details;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  get status(): number {
    return ERROR_CATALOG[this.code].status;
  }

  get retryable(): boolean {
    return ERROR_CATALOG[this.code].retryable;
  }

  get grpcStatus(): number {
    return ERROR_CATALOG[this.code].grpc;
  }

  /** True for errors whose message is safe to show a caller (everything but 500). */
  get isPublic(): boolean {
    return this.code !== 'INTERNAL_ERROR';
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}

/** `/docs/errors#<code in lower case with hyphens>`, the anchor the docs page provides. */
export function docsUrl(code: ErrorCode): string {
  return `/docs/errors#${code.toLowerCase().replaceAll('_', '-')}`;
}

export interface PublicErrorBody {
  error: {
    code: ErrorCode;
    message: string;
    docs_url: string;
    request_id: string;
    retryable: boolean;
    reason?: string;
    [extra: string]: unknown;
  };
}

const INTERNAL_MESSAGE = 'An internal error occurred. Please report the request_id to support.';

/**
 * The documented error body. Unknown errors become INTERNAL_ERROR with a fixed message, so that
 * internals (stack traces, hostnames, driver messages) never reach a caller.
 */
export function toPublicErrorBody(err: unknown, requestId: string): PublicErrorBody {
  const app = isAppError(err)
    ? err
    : (networkFailureError(err) ?? new AppError('INTERNAL_ERROR', INTERNAL_MESSAGE));
  const message = app.isPublic ? app.message : INTERNAL_MESSAGE;
  return {
    error: {
      ...(app.details ?? {}),
      code: app.code,
      message,
      docs_url: docsUrl(app.code),
      request_id: requestId,
      retryable: app.retryable,
      ...(app.reason === undefined ? {} : { reason: app.reason }),
    },
  };
}

/**
 * An error that is a connection failing anywhere along its cause chain (DNS lookup, refused,
 * reset, TLS, timeout) as the documented retryable answer: UPSTREAM_TIMEOUT for a timeout,
 * UPSTREAM_ERROR for the rest, naming the failure but never the host. Undefined for any other
 * error. The last word before an unknown error would become INTERNAL_ERROR: a network that fails
 * is the upstream's trouble, never a 500.
 */
export function networkFailureError(err: unknown, upstream = 'An upstream service'): AppError | undefined {
  if (isAppError(err)) return undefined;
  const network = networkCauseOf(err);
  if (network.cause === 'other') return undefined;
  const message = `${upstream} could not be reached: ${network.detail}.`;
  return network.cause === 'timeout'
    ? new AppError('UPSTREAM_TIMEOUT', message, { cause: err })
    : new AppError('UPSTREAM_ERROR', message, { cause: err });
}

/** Factories: call sites name the situation, the catalogue decides status and retryability. */
export const Errors = {
  invalidRequest: (message: string, details?: Record<string, unknown>) =>
    new AppError('INVALID_REQUEST', message, details ? { details } : {}),
  invalidUrl: (message = 'The URL is not an accepted video URL.') => new AppError('INVALID_URL', message),
  invalidInclude: (bad: readonly string[], valid: readonly string[]) =>
    new AppError(
      'INVALID_INCLUDE',
      `Unknown include field${bad.length > 1 ? 's' : ''}: ${bad.join(', ')}. Valid fields: ${valid.join(', ')}.`,
      { details: { valid_fields: [...valid] } },
    ),
  unauthorized: () =>
    new AppError(
      'UNAUTHORIZED',
      'The API key is missing or invalid. Send it as `X-API-Key: <key>` or `Authorization: Bearer <key>`; a key is `sxk_v1_` followed by 32 letters and digits.',
    ),
  /** An expired key: 401 like an unknown one, with a reason, since its holder may not know. */
  keyExpired: (expiredAt: string) =>
    new AppError('UNAUTHORIZED', `The API key expired at ${expiredAt}; make a new key.`, {
      reason: 'key_expired',
    }),
  insufficientScope: (required: string) =>
    new AppError('INSUFFICIENT_SCOPE', `This API key lacks the \`${required}\` scope this operation needs.`, {
      details: { required_scope: required },
    }),
  sourceNotAllowed: (sourceIp: string) =>
    new AppError(
      'SOURCE_NOT_ALLOWED',
      `This API key may not be used from ${sourceIp}: it is outside the key's allowed source networks.`,
    ),
  tierRequired: (required: string, current: string) =>
    new AppError(
      'TIER_REQUIRED',
      `This operation requires the ${required} tier or higher; your tier is ${current}.`,
      {
        details: { required_tier: required },
      },
    ),
  insufficientCredits: (required: number, available: number) =>
    new AppError(
      'INSUFFICIENT_CREDITS',
      `Insufficient credits: this request needs up to ${plural(required, 'credit')} and ${available} ${isAre(available)} available.`,
      { details: { required, available } },
    ),
  rateLimited: (message: string, retryAfterSeconds: number) =>
    new AppError('RATE_LIMITED', message, { retryAfterSeconds }),
  videoNotFound: (videoId: string) =>
    new AppError('VIDEO_NOT_FOUND', `Video ${videoId} was not found or is unavailable.`),
  videoUnavailable: (videoId: string, reason: UnavailableReason, upstreamMessage?: string) =>
    new AppError(
      'VIDEO_UNAVAILABLE',
      `Video ${videoId} is unavailable (${reason})${upstreamMessage ? `: ${upstreamMessage}` : '.'}`,
      { reason },
    ),
  noSubtitles: (videoId: string) => new AppError('NO_SUBTITLES', `Video ${videoId} has no subtitles.`),
  videoProcessing: (videoId: string, reason: ProcessingReason) =>
    new AppError(
      'VIDEO_PROCESSING',
      reason === 'post_live'
        ? `Video ${videoId} is a live stream that has ended and is still being processed; its captions come once processing is complete.`
        : `Video ${videoId} is live now; its captions come once the stream has ended and been processed.`,
      { reason, retryAfterSeconds: PROCESSING_RETRY_AFTER_SECONDS[reason] },
    ),
  languageNotAvailable: (videoId: string, language: string, available: readonly string[]) =>
    new AppError(
      'LANGUAGE_NOT_AVAILABLE',
      `Subtitles for video ${videoId} are not available in '${language}'. Available: ${available.join(', ') || 'none'}.`,
      { details: { available_languages: [...available] } },
    ),
  /**
   * A translation was asked for and a source track exists, but the platform refuses to translate it
   * (an empty `tlang` answer, or no translation languages listed) and no model is configured to do it.
   */
  translationUnavailable: (videoId: string, language: string, available: readonly string[]) =>
    new AppError(
      'LANGUAGE_NOT_AVAILABLE',
      `Subtitles for video ${videoId} are not available in '${language}', and the platform refuses to translate them today. Available: ${available.join(', ') || 'none'}.`,
      { reason: 'translation_unavailable', details: { available_languages: [...available] } },
    ),
  jobNotFound: (jobId: string) => new AppError('JOB_NOT_FOUND', `No job ${jobId.slice(0, 64)} for this key.`),
  playlistNotFound: (playlistId: string) =>
    new AppError('PLAYLIST_NOT_FOUND', `Playlist ${playlistId} was not found or is private.`),
  channelNotFound: (channel: string, why: string, reason = 'not_found') =>
    new AppError(
      'CHANNEL_NOT_FOUND',
      `Channel ${channel} was not found or cannot be listed: ${why.replace(/\.$/, '')}.`,
      {
        reason,
      },
    ),
  commentsDisabled: (videoId: string) =>
    new AppError('COMMENTS_DISABLED', `Comments are turned off for video ${videoId}.`),
  notEnoughComments: (videoId: string, available: number) =>
    new AppError(
      'NOT_ENOUGH_COMMENTS',
      `Video ${videoId} has ${plural(available, 'comment')}; analysis needs at least 10.`,
      { details: { available_comments: available } },
    ),
  upstreamError: (message: string, cause?: unknown) => new AppError('UPSTREAM_ERROR', message, { cause }),
  upstreamBlocked: (reason: BlockedReason, message: string, cause?: unknown, retryAfterSeconds?: number) =>
    new AppError('UPSTREAM_BLOCKED', message, {
      reason,
      cause,
      ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
    }),
  upstreamTimeout: (message = 'The video platform did not answer in time.', cause?: unknown) =>
    new AppError('UPSTREAM_TIMEOUT', message, { cause }),
  serviceUnavailable: (service: string, cause?: unknown) =>
    new AppError('SERVICE_UNAVAILABLE', `The ${service} service is not reachable right now.`, { cause }),
  internal: (cause?: unknown) => new AppError('INTERNAL_ERROR', INTERNAL_MESSAGE, { cause }),
  timeout: (message = 'Not finished before the request deadline.') => new AppError('TIMEOUT', message),
} as const;

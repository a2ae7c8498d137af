/**
 * The AppError ↔ gRPC status mapping. Across the wire an AppError travels as its catalogue gRPC
 * status plus trailing metadata: `app-error-code`, `app-error-message`, `app-error-reason`,
 * `app-error-details` (JSON) and `app-error-retry-after`. gRPC forbids non-ASCII in text metadata,
 * so message, reason and details are percent-encoded (encodeURIComponent) and decoded by
 * `fromGrpcError`.
 */
import * as grpc from '@grpc/grpc-js';
import { AppError, Errors, isAppError, isErrorCode, networkFailureError } from '@subx/errors';
import type { Logger } from '@subx/ports';

export const REQUEST_ID_HEADER = 'x-request-id';
export const APP_ERROR_CODE = 'app-error-code';
export const APP_ERROR_MESSAGE = 'app-error-message';
export const APP_ERROR_REASON = 'app-error-reason';
export const APP_ERROR_DETAILS = 'app-error-details';
export const APP_ERROR_RETRY_AFTER = 'app-error-retry-after';

function jsonSafe(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

/** The first value of a metadata key as text. */
export function firstString(metadata: grpc.Metadata, key: string): string | undefined {
  const value = metadata.get(key)[0];
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : value.toString('utf8');
}

function decoded(metadata: grpc.Metadata, key: string): string | undefined {
  const value = firstString(metadata, key);
  if (value === undefined) return undefined;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * Server side: any thrown value → a gRPC status with app-error metadata. A connection that failed
 * (networkFailureError) is the retryable UPSTREAM_ERROR or UPSTREAM_TIMEOUT; other unknown errors
 * become INTERNAL with the fixed public message, the real error logged with its stack.
 */
export function toGrpcError(err: unknown, logger: Logger): grpc.ServerErrorResponse {
  let app: AppError;
  if (isAppError(err)) {
    app = err;
    if (!app.isPublic) logger.error({ err, cause: app.cause }, 'internal error');
    else logger.info({ code: app.code, reason: app.reason }, 'request failed');
  } else {
    const network = networkFailureError(err);
    if (network) {
      logger.warn({ err, code: network.code }, network.message);
      app = network;
    } else {
      logger.error({ err }, 'unhandled error in gRPC handler');
      app = Errors.internal();
    }
  }
  const message = app.isPublic ? app.message : Errors.internal().message;
  const metadata = new grpc.Metadata();
  metadata.set(APP_ERROR_CODE, app.code);
  metadata.set(APP_ERROR_MESSAGE, encodeURIComponent(message));
  if (app.reason !== undefined) metadata.set(APP_ERROR_REASON, encodeURIComponent(app.reason));
  if (app.details !== undefined && app.isPublic) {
    metadata.set(APP_ERROR_DETAILS, encodeURIComponent(jsonSafe(app.details)));
  }
  if (app.retryAfterSeconds !== undefined) metadata.set(APP_ERROR_RETRY_AFTER, String(app.retryAfterSeconds));
  return Object.assign(new Error(message), { code: app.grpcStatus, details: message, metadata });
}

function isServiceError(err: unknown): err is grpc.ServiceError {
  return err instanceof Error && typeof (err as { code?: unknown }).code === 'number' && 'metadata' in err;
}

/**
 * Client side: a failed call → AppError. With app-error metadata the original error is rebuilt
 * (code, message, reason, details); without it, transport failures (UNAVAILABLE,
 * DEADLINE_EXCEEDED) become SERVICE_UNAVAILABLE and anything else INTERNAL_ERROR.
 */
export function fromGrpcError(err: unknown, serviceLabel: string): AppError {
  if (isAppError(err)) return err;
  if (!isServiceError(err)) return Errors.internal(err);
  const code = firstString(err.metadata, APP_ERROR_CODE);
  if (isErrorCode(code)) {
    const message = decoded(err.metadata, APP_ERROR_MESSAGE) ?? err.details;
    const reason = decoded(err.metadata, APP_ERROR_REASON);
    const rawDetails = decoded(err.metadata, APP_ERROR_DETAILS);
    let details: Record<string, unknown> | undefined;
    if (rawDetails !== undefined) {
      try {
        const parsed: unknown = JSON.parse(rawDetails);
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
          details = parsed as Record<string, unknown>;
      } catch {
        details = undefined;
      }
    }
    const retryAfter = Number(firstString(err.metadata, APP_ERROR_RETRY_AFTER));
    return new AppError(code, message, {
      cause: err,
      ...(reason === undefined ? {} : { reason }),
      ...(details === undefined ? {} : { details }),
      ...(Number.isFinite(retryAfter) && retryAfter >= 0 ? { retryAfterSeconds: retryAfter } : {}),
    });
  }
  if (err.code === grpc.status.DEADLINE_EXCEEDED) {
    return new AppError('SERVICE_UNAVAILABLE', `The ${serviceLabel} service did not answer in time.`, {
      cause: err,
    });
  }
  if (err.code === grpc.status.UNAVAILABLE) return Errors.serviceUnavailable(serviceLabel, err);
  return Errors.internal(err);
}

/**
 * A failure inside a call that answers several items (a batch): what a failed unary call carries
 * (status code, message, trailing metadata), as plain data for a message field.
 */
export interface ItemFailure {
  code: number;
  message: string;
  metadata: Record<string, string>;
}

/** Server side: any thrown value → the ItemFailure whose unary twin toGrpcError would send. */
export function toItemFailure(err: unknown, logger: Logger): ItemFailure {
  const grpcError = toGrpcError(err, logger);
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(grpcError.metadata?.getMap() ?? {})) {
    metadata[key] = typeof value === 'string' ? value : value.toString('utf8');
  }
  return { code: grpcError.code ?? grpc.status.UNKNOWN, message: grpcError.details ?? '', metadata };
}

/** Client side: an ItemFailure → the AppError fromGrpcError builds for the same unary failure. */
export function fromItemFailure(failure: ItemFailure, serviceLabel: string): AppError {
  const metadata = new grpc.Metadata();
  for (const [key, value] of Object.entries(failure.metadata)) metadata.set(key, value);
  const error: grpc.ServiceError = Object.assign(new Error(`${failure.code} ${failure.message}`), {
    code: failure.code,
    details: failure.message,
    metadata,
  });
  return fromGrpcError(error, serviceLabel);
}

/**
 * A gRPC status code's name (`OK`, `NOT_FOUND`, ...), the `code` label of the gRPC metrics;
 * `UNKNOWN` for a missing code or one outside the enum.
 */
export function grpcStatusName(code: number | undefined): string {
  return grpc.status[code ?? grpc.status.UNKNOWN] ?? 'UNKNOWN';
}

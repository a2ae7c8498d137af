/**
 * gRPC failures → AppError. Services send the catalogue code in trailing metadata
 * (`app-error-code`, `app-error-reason`, `app-error-details` JSON); without it, the status code
 * decides. Messages of unknown failures never reach callers (toPublicErrorBody hides INTERNAL_ERROR).
 */
import { status as GrpcCode } from '@grpc/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import { AppError, Errors, isErrorCode } from '@subx/errors';

function firstString(error: ServiceError, key: string): string | undefined {
  const value = error.metadata?.get(key)[0];
  return typeof value === 'string' ? value : undefined;
}

function parseDetails(raw: string | undefined): Record<string, unknown> | undefined {
  if (raw === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(raw);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

export function fromGrpcError(error: ServiceError, service: string): AppError {
  const code = firstString(error, 'app-error-code');
  if (isErrorCode(code)) {
    const reason = firstString(error, 'app-error-reason');
    const details = parseDetails(firstString(error, 'app-error-details'));
    return new AppError(code, error.details || code, {
      ...(reason === undefined ? {} : { reason }),
      ...(details === undefined ? {} : { details }),
      cause: error,
    });
  }
  switch (error.code) {
    case GrpcCode.DEADLINE_EXCEEDED:
      return new AppError('UPSTREAM_TIMEOUT', `The ${service} service did not answer in time.`, {
        cause: error,
      });
    case GrpcCode.UNAVAILABLE:
      return Errors.serviceUnavailable(service, error);
    case GrpcCode.CANCELLED:
      return Errors.timeout();
    default:
      return Errors.internal(error);
  }
}

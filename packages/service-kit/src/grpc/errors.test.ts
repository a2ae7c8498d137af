import * as grpc from '@grpc/grpc-js';
import { AppError, Errors, GrpcStatus } from '@subx/errors';
import { describe, expect, it } from 'vitest';
import { fromGrpcError, grpcStatusName, serviceNameOf, toGrpcError } from './index.ts';
import { createLogger } from '../logger.ts';

function logger() {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({
    service: 't',
    destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) },
  });
  return { log, lines };
}

/** What a client receives: the server's status fields on an Error, as grpc-js builds it. */
function asServiceError(status: grpc.ServerErrorResponse): grpc.ServiceError {
  return Object.assign(new Error(`${status.code} ${status.details}`), {
    code: status.code as grpc.status,
    details: status.details ?? '',
    metadata: status.metadata ?? new grpc.Metadata(),
  });
}

describe('AppError ↔ gRPC status', () => {
  it('uses the catalogue gRPC status and app-error metadata', () => {
    const { log } = logger();
    const status = toGrpcError(Errors.insufficientCredits(5, 2), log);
    expect(status.code).toBe(GrpcStatus.FAILED_PRECONDITION);
    expect(status.metadata?.get('app-error-code')).toEqual(['INSUFFICIENT_CREDITS']);
    expect(JSON.parse(decodeURIComponent(String(status.metadata?.get('app-error-details')[0])))).toEqual({
      required: 5,
      available: 2,
    });
  });

  it('round-trips code, message (non-ASCII), reason and details', () => {
    const { log } = logger();
    const original = new AppError('VIDEO_UNAVAILABLE', 'Vídeo indisponível — “privado”', {
      reason: 'private',
      details: { n: 1, list: ['a'] },
    });
    const back = fromGrpcError(asServiceError(toGrpcError(original, log)), 'extractor');
    expect(back).toBeInstanceOf(AppError);
    expect(back).toMatchObject({
      code: 'VIDEO_UNAVAILABLE',
      message: original.message,
      reason: 'private',
      details: { n: 1, list: ['a'] },
    });
  });

  it('a connection that failed in a handler crosses as the retryable UPSTREAM_ERROR, not INTERNAL', () => {
    const { log, lines } = logger();
    const cause = Object.assign(new Error('connect ECONNREFUSED 10.0.0.7:443'), { code: 'ECONNREFUSED' });
    const back = fromGrpcError(
      asServiceError(toGrpcError(new TypeError('fetch failed', { cause }), log)),
      'extractor',
    );
    expect(back.code).toBe('UPSTREAM_ERROR');
    expect(back.message).toContain('connection refused');
    expect(back.message).not.toContain('10.0.0.7');
    expect(lines[0]).toMatchObject({ level: 'warn' });
  });

  it('never sends an unknown error message and logs it instead', () => {
    const { log, lines } = logger();
    const status = toGrpcError(new TypeError('cannot read x of undefined at /srv/app.ts'), log);
    expect(status.code).toBe(GrpcStatus.INTERNAL);
    expect(status.details).toBe(Errors.internal().message);
    expect(status.metadata?.get('app-error-code')).toEqual(['INTERNAL_ERROR']);
    expect(JSON.stringify(status.metadata?.getMap())).not.toContain('/srv/app.ts');
    expect(lines[0]).toMatchObject({
      level: 'error',
      err: { message: 'cannot read x of undefined at /srv/app.ts' },
    });
  });

  it('an INTERNAL_ERROR AppError with a custom message is not echoed either', () => {
    const { log } = logger();
    const status = toGrpcError(new AppError('INTERNAL_ERROR', 'db password rejected'), log);
    expect(status.details).toBe(Errors.internal().message);
  });

  it('maps transport failures without app metadata', () => {
    const bare = (code: grpc.status) =>
      Object.assign(new Error('x'), { code, details: 'raw details', metadata: new grpc.Metadata() });
    expect(fromGrpcError(bare(grpc.status.UNAVAILABLE), 'ai')).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: 'The ai service is not reachable right now.',
    });
    expect(fromGrpcError(bare(grpc.status.DEADLINE_EXCEEDED), 'ai').code).toBe('SERVICE_UNAVAILABLE');
    const internal = fromGrpcError(bare(grpc.status.UNIMPLEMENTED), 'ai');
    expect(internal.code).toBe('INTERNAL_ERROR');
    expect(internal.message).not.toContain('raw details');
  });

  it('an explicit UPSTREAM_TIMEOUT from the server stays UPSTREAM_TIMEOUT', () => {
    const { log } = logger();
    const back = fromGrpcError(asServiceError(toGrpcError(Errors.upstreamTimeout(), log)), 'extractor');
    expect(back.code).toBe('UPSTREAM_TIMEOUT');
    expect(back.status).toBe(504);
  });

  it('serviceNameOf reads the package-qualified name from a definition', () => {
    expect(
      serviceNameOf({
        get: {
          path: '/subx.comments.v1.CommentsService/GetComments',
          requestStream: false,
          responseStream: false,
          requestSerialize: () => Buffer.alloc(0),
          requestDeserialize: () => ({}),
          responseSerialize: () => Buffer.alloc(0),
          responseDeserialize: () => ({}),
        },
      }),
    ).toBe('subx.comments.v1.CommentsService');
  });
});

describe('grpcStatusName', () => {
  it('names a status code as the metrics label, UNKNOWN for a missing or unheard-of code', () => {
    expect(grpcStatusName(0)).toBe('OK');
    expect(grpcStatusName(5)).toBe('NOT_FOUND');
    expect(grpcStatusName(14)).toBe('UNAVAILABLE');
    expect(grpcStatusName(undefined)).toBe('UNKNOWN');
    expect(grpcStatusName(99)).toBe('UNKNOWN');
  });
});

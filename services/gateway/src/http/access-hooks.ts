/**
 * Hooks of the authenticated routes. admit runs in onRequest, before the body is parsed and
 * validated, which gives the decided order 401 → 403 → 429 → 400 → 402 → work. Idempotency runs
 * after validation (preHandler); the response of a completed request is replayed for the same key.
 */
import { createHash } from 'node:crypto';
import type {
  FastifyReply,
  FastifyRequest,
  onRequestAsyncHookHandler,
  onRequestHookHandler,
  preHandlerHookHandler,
} from 'fastify';
import type { ApiKeyScope } from '@subx/contracts/access';
import { AppError, Errors } from '@subx/errors';
import type { AccessControl, Admission, IdempotencyStore } from '../access/types.ts';
import type { Account, Operation } from '@subx/credits';
import type { AccountReadLimiter, IpRateLimiter } from '../access/rate-limit.ts';
import { rateLimitOf } from '../access/rate-limit.ts';
import { isValidIdempotencyKey } from '../access/idempotency.ts';
import { apiKeyOf } from './api-key-header.ts';
import { setRateLimitHeaders } from './rate-limit-headers.ts';

declare module 'fastify' {
  interface FastifyRequest {
    admission: Admission | null;
    /** Whose key it is: set by admit (counted routes) and by authenticate (account-only routes). */
    account: Account | null;
    idempotencyKey: string | null;
  }
}

/**
 * The free account routes (reading one's own jobs, rotating the webhook secret, the keys): a key
 * that may make the call (its scope and networks), then its read limit. Nothing is counted or
 * charged, so no tier check and no rate-limit headers.
 */
export function authenticateHook(
  access: AccessControl,
  readLimiter: AccountReadLimiter,
  scope: ApiKeyScope,
): onRequestAsyncHookHandler {
  return async function authenticate(request: FastifyRequest) {
    const account = await access.authorize({
      apiKey: apiKeyOf(request.headers),
      scope,
      sourceIp: request.ip,
    });
    await readLimiter.check(account.id);
    request.account = account;
  };
}

export function admitHook(access: AccessControl, operation: Operation): onRequestHookHandler {
  // A callback hook: an admission decided at once (AccessControl.admit) goes on to the body
  // without a promise of its own and a turn of the microtask queue on every counted request.
  return function admit(request, reply, done) {
    const decided = access.admit({
      apiKey: apiKeyOf(request.headers),
      operation,
      sourceIp: request.ip,
    });
    if (!(decided instanceof Promise)) {
      admitted(request, reply, decided);
      done();
      return;
    }
    decided.then(
      (admission) => {
        admitted(request, reply, admission);
        done();
      },
      (error: Error) => {
        const state = rateLimitOf(error);
        if (state) setRateLimitHeaders(reply, state);
        done(error);
      },
    );
  };
}

function admitted(request: FastifyRequest, reply: FastifyReply, admission: Admission): void {
  request.admission = admission;
  request.account = admission.account;
  setRateLimitHeaders(reply, admission.rateLimit);
}

export function ipLimitHook(limiter: IpRateLimiter): onRequestAsyncHookHandler {
  return async function ipLimit(request: FastifyRequest) {
    await limiter.check(request.ip);
  };
}

function fingerprint(request: FastifyRequest): string {
  return createHash('sha256')
    .update(`${request.method}\n${request.url}\n${JSON.stringify(request.body ?? null)}`)
    .digest('base64url');
}

export function idempotencyHook(store: IdempotencyStore): preHandlerHookHandler {
  async function claim(
    request: FastifyRequest,
    reply: FastifyReply,
    accountId: string,
    header: string | string[],
  ): Promise<void> {
    if (!isValidIdempotencyKey(header)) {
      throw Errors.invalidRequest('The Idempotency-Key header must be 1 to 255 printable ASCII characters.');
    }
    const claimed = await store.claim(accountId, header, fingerprint(request));
    if (claimed.kind === 'in_progress') {
      throw new AppError('CONFLICT', 'A request with this Idempotency-Key is still being processed.');
    }
    if (claimed.kind === 'replay') {
      reply.headers(claimed.response.headers).header('idempotent-replayed', 'true');
      reply.code(claimed.response.status).send(claimed.response.body);
      return;
    }
    request.idempotencyKey = header;
  }
  // A callback hook: most requests carry no Idempotency-Key and should not pay a promise for it.
  return function idempotency(request, reply, done) {
    const header = request.headers['idempotency-key'];
    if (header === undefined || !request.admission) {
      done();
      return;
    }
    claim(request, reply, request.admission.account.id, header).then(
      // A replay has answered: fastify must not go on to the handler.
      () => (reply.sent ? undefined : done()),
      (error: Error) => done(error),
    );
  };
}

/** onSend: keep what we send so onResponse can store it for replays. */
export function captureForIdempotency(request: FastifyRequest, reply: FastifyReply, payload: unknown): void {
  if (request.idempotencyKey === null) return;
  // Answers go out as strings or (extract) as UTF-8 bytes; a stream is never stored for replay.
  let body: string;
  if (typeof payload === 'string') body = payload;
  else if (Buffer.isBuffer(payload)) body = payload.toString('utf8');
  else return;
  captured.set(request, {
    status: reply.statusCode,
    contentType: String(reply.getHeader('content-type') ?? ''),
    location: typeof reply.getHeader('location') === 'string' ? String(reply.getHeader('location')) : null,
    body,
  });
}

const captured = new WeakMap<
  FastifyRequest,
  { status: number; contentType: string; location: string | null; body: string }
>();

/** onResponse: a 2xx is stored for replay; anything else frees the key (nothing was charged). */
export async function finishIdempotency(store: IdempotencyStore, request: FastifyRequest): Promise<void> {
  const key = request.idempotencyKey;
  const accountId = request.admission?.account.id;
  if (key === null || accountId === undefined) return;
  const response = captured.get(request);
  if (response && response.status >= 200 && response.status < 300) {
    await store.complete(accountId, key, {
      status: response.status,
      // Location: a replayed 202 of POST /api/v1/jobs still says where the job is.
      headers: {
        'content-type': response.contentType,
        ...(response.location ? { location: response.location } : {}),
      },
      body: response.body,
    });
  } else {
    await store.abandon(accountId, key);
  }
}

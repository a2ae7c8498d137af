// gRPC kit against a real grpc-js server on 127.0.0.1:0 with the generated comments contract.
import * as grpc from '@grpc/grpc-js';
import { commentsV1 } from '@subx/contracts';
import { AppError, Errors } from '@subx/errors';
import { afterEach, describe, expect, it } from 'vitest';
import { HealthClient } from '../src/grpc/health-service.ts';
import type { ServingStatus } from '../src/grpc/health-service.ts';
import { checkHealth, createGrpcClient, defineService, startGrpcServer } from '../src/grpc/index.ts';
import type { CallContext } from '../src/grpc/index.ts';
import { createHealthRegistry } from '../src/health.ts';
import { createLogger } from '../src/logger.ts';

type Req = commentsV1.GetCommentsRequest;
type Res = commentsV1.GetCommentsResponse;

function setupLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    service: 'grpc-test',
    level: 'debug',
    destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) },
  });
  return { logger, lines };
}

const request = (videoId: string): Req => ({
  videoId,
  max: 10,
  sort: commentsV1.CommentSort.COMMENT_SORT_TIME,
  forceRefresh: false,
  cachedOnly: false,
});

const response = (videoId: string): Res => ({
  videoId,
  comments: [
    { id: 'c1', author: 'ana', text: 'olá 👋', likes: 12n, publishedAt: 1_700_000_000n, isReply: false },
  ],
  commentsDisabled: false,
  totalCount: 1n,
  cached: false,
});

const SERVICE = 'subx.comments.v1.CommentsService';

describe('grpc kit', () => {
  const cleanup: (() => unknown)[] = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });

  async function start(
    handler: (req: Req, ctx: CallContext) => Promise<Res>,
    extra: { registry?: ReturnType<typeof createHealthRegistry> } = {},
  ) {
    const { logger, lines } = setupLogger();
    const server = await startGrpcServer({
      port: 0,
      host: '127.0.0.1',
      logger,
      services: [defineService(commentsV1.CommentsServiceService, { getComments: handler })],
      ...(extra.registry ? { health: { registry: extra.registry, intervalMs: 50 } } : {}),
    });
    cleanup.push(() => server.shutdown(1_000));
    const client = createGrpcClient(commentsV1.CommentsServiceClient, `127.0.0.1:${server.port}`, {
      defaultDeadlineMs: 2_000,
      logger,
    });
    cleanup.push(() => client.close());
    return { server, client, lines };
  }

  it('round-trips a successful call with the generated types and passes the request id', async () => {
    let seen: { requestId: string; deadline: Date | undefined } | undefined;
    const { server, client } = await start(async (req, ctx) => {
      seen = { requestId: ctx.requestId, deadline: ctx.deadline };
      return response(req.videoId);
    });
    expect(server.port).toBeGreaterThan(0);
    const res = await client.getComments(request('dQw4w9WgXcQ'), { requestId: 'req-1' });
    expect(res).toEqual(response('dQw4w9WgXcQ'));
    expect(seen?.requestId).toBe('req-1');
    expect(seen?.deadline).toBeInstanceOf(Date);
    expect(seen!.deadline!.getTime()).toBeGreaterThan(Date.now());
  });

  it('generates a request id when the caller sends none', async () => {
    let requestId = '';
    const { client } = await start(async (req, ctx) => {
      requestId = ctx.requestId;
      return response(req.videoId);
    });
    await client.getComments(request('a'));
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('an AppError crosses the wire with code, message, reason and details intact', async () => {
    const { client } = await start(async (req) => {
      if (req.videoId === 'private') throw Errors.videoUnavailable('private', 'private');
      throw Errors.languageNotAvailable(req.videoId, 'xx', ['en', 'pt-BR', 'zh-Hans']);
    });
    const err1 = await client.getComments(request('private')).catch((e: unknown) => e);
    expect(err1).toBeInstanceOf(AppError);
    expect(err1).toMatchObject({
      code: 'VIDEO_UNAVAILABLE',
      reason: 'private',
      message: 'Video private is unavailable (private).',
    });
    expect((err1 as AppError).status).toBe(404);

    const err2 = (await client.getComments(request('vid 日本')).catch((e: unknown) => e)) as AppError;
    expect(err2.code).toBe('LANGUAGE_NOT_AVAILABLE');
    expect(err2.message).toBe(
      "Subtitles for video vid 日本 are not available in 'xx'. Available: en, pt-BR, zh-Hans.",
    );
    expect(err2.details).toEqual({ available_languages: ['en', 'pt-BR', 'zh-Hans'] });
    const cause = err2.cause as grpc.ServiceError;
    expect(cause.code).toBe(grpc.status.NOT_FOUND);
  });

  it('retryAfterSeconds and bigint details survive', async () => {
    const { client } = await start(async () => {
      throw new AppError('RATE_LIMITED', 'slow down', { retryAfterSeconds: 30, details: { used: 5n } });
    });
    const err = (await client.getComments(request('x')).catch((e: unknown) => e)) as AppError;
    expect(err).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: 30, details: { used: '5' } });
  });

  it('an unknown error becomes INTERNAL_ERROR with a fixed message, and is logged with its stack', async () => {
    const { client, lines } = await start(async () => {
      throw new Error('ECONNREFUSED mongo-0.internal:27017 password=hunter2');
    });
    const err = (await client
      .getComments(request('x'), { requestId: 'req-500' })
      .catch((e: unknown) => e)) as AppError;
    expect(err).toBeInstanceOf(AppError);
    expect(err.code).toBe('INTERNAL_ERROR');
    expect(err.message).toBe(Errors.internal().message);
    expect(JSON.stringify({ m: err.message, c: (err.cause as grpc.ServiceError).details })).not.toMatch(
      /mongo|hunter2/,
    );
    expect((err.cause as grpc.ServiceError).code).toBe(grpc.status.INTERNAL);
    const logged = lines.find((l) => l.msg === 'unhandled error in gRPC handler');
    expect(logged).toMatchObject({ request_id: 'req-500', level: 'error' });
    expect(String((logged?.err as { stack?: string }).stack)).toContain('ECONNREFUSED');
  });

  it('a call that outlives its deadline fails with SERVICE_UNAVAILABLE and aborts the handler signal', async () => {
    let aborted = false;
    const { client } = await start(
      (_req, ctx) =>
        new Promise<Res>((resolve) => {
          ctx.signal.addEventListener('abort', () => {
            aborted = true;
            resolve(response('late'));
          });
        }),
    );
    const t0 = performance.now();
    const err = (await client
      .getComments(request('x'), { deadlineMs: 100 })
      .catch((e: unknown) => e)) as AppError;
    expect(err.code).toBe('SERVICE_UNAVAILABLE');
    expect((err.cause as grpc.ServiceError).code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(performance.now() - t0).toBeLessThan(1_500);
    await expect.poll(() => aborted, { timeout: 2_000 }).toBe(true);
  });

  it('an unreachable server maps to SERVICE_UNAVAILABLE and health UNREACHABLE', async () => {
    const { logger } = setupLogger();
    // Bind and immediately release a port so nothing listens on it.
    const probe = await startGrpcServer({ port: 0, host: '127.0.0.1', logger, services: [] });
    const deadPort = probe.port;
    await probe.shutdown(1_000);
    const client = createGrpcClient(commentsV1.CommentsServiceClient, `127.0.0.1:${deadPort}`, {
      defaultDeadlineMs: 500,
    });
    cleanup.push(() => client.close());
    const err = (await client.getComments(request('x')).catch((e: unknown) => e)) as AppError;
    expect(err.code).toBe('SERVICE_UNAVAILABLE');
    expect(err.message).toMatch(/comments service/);
    expect(await checkHealth(`127.0.0.1:${deadPort}`, '', 500)).toBe('UNREACHABLE');
  });

  it('serves grpc.health.v1: SERVING per service, UNKNOWN for others, and NOT_SERVING once shutdown starts', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const inHandler = new Promise<void>((r) => (entered = r));
    const { server, client } = await start(async (req) => {
      entered();
      await gate;
      return response(req.videoId);
    });
    const address = `127.0.0.1:${server.port}`;
    expect(await checkHealth(address)).toBe('SERVING');
    expect(await checkHealth(address, SERVICE)).toBe('SERVING');
    expect(await checkHealth(address, 'nope.v1.Nope')).toBe('UNKNOWN');
    expect(await checkHealth(client.raw, SERVICE)).toBe('SERVING'); // over the client's own channel

    server.health.setServing(SERVICE, false);
    expect(await checkHealth(address, SERVICE)).toBe('NOT_SERVING');
    server.health.setServing(SERVICE, true);

    // A watcher sees SERVING, then NOT_SERVING when shutdown begins, then its stream ends.
    const healthClient = new HealthClient(address, grpc.credentials.createInsecure());
    cleanup.push(() => healthClient.close());
    const watched: ServingStatus[] = [];
    const watch = healthClient.watch({ service: SERVICE });
    const watchEnded = new Promise<void>((resolve) => {
      watch.on('data', (m: { status: ServingStatus }) => watched.push(m.status));
      watch.on('end', () => resolve());
      watch.on('error', () => resolve());
    });
    await expect.poll(() => watched).toEqual(['SERVING']);

    // Graceful shutdown lets the in-flight call finish.
    const inflight = client.getComments(request('inflight'), { deadlineMs: 5_000 });
    await inHandler;
    const shutdown = server.shutdown(5_000);
    await watchEnded;
    expect(watched).toEqual(['SERVING', 'NOT_SERVING']);
    expect(server.health.status(SERVICE)).toBe('NOT_SERVING');
    release();
    await expect(inflight).resolves.toMatchObject({ videoId: 'inflight' });
    expect(await shutdown).toBe(true);
    // After shutdown the server is gone.
    expect(await checkHealth(address, '', 500)).toBe('UNREACHABLE');
  });

  it('forces shutdown when in-flight work exceeds the timeout', async () => {
    let entered!: () => void;
    const inHandler = new Promise<void>((r) => (entered = r));
    const { server, client } = await start(async () => {
      entered();
      return new Promise<Res>(() => {});
    });
    const inflight = client.getComments(request('stuck'), { deadlineMs: 5_000 }).catch((e: unknown) => e);
    await inHandler;
    const t0 = performance.now();
    expect(await server.shutdown(200)).toBe(false);
    expect(performance.now() - t0).toBeLessThan(2_000);
    const err = (await inflight) as AppError;
    expect(err).toBeInstanceOf(AppError);
  });

  it('follows a health registry: down → NOT_SERVING, back up → SERVING', async () => {
    const registry = createHealthRegistry({ defaultTimeoutMs: 200 });
    let mongoUp = true;
    registry.register('mongo', () => mongoUp);
    const { server } = await start(async (req) => response(req.videoId), { registry });
    const address = `127.0.0.1:${server.port}`;
    expect(await checkHealth(address)).toBe('SERVING');
    mongoUp = false;
    await expect.poll(() => checkHealth(address, SERVICE), { timeout: 2_000 }).toBe('NOT_SERVING');
    mongoUp = true;
    await expect.poll(() => checkHealth(address, SERVICE), { timeout: 2_000 }).toBe('SERVING');
  });
});

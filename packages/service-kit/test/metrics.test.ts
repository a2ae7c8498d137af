// /metrics over a real socket, and the gRPC metrics every service gets from the kit: a real grpc-js
// server and client on 127.0.0.1:0 with the generated comments contract.
import { commentsV1 } from '@subx/contracts';
import { Errors } from '@subx/errors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGrpcClient, defineService, startGrpcServer } from '../src/grpc/index.ts';
import { createLogger } from '../src/logger.ts';
import { startMetricsServer, type MetricsServer } from '../src/metrics/server.ts';

const logger = createLogger({ service: 'metrics-test', level: 'silent' });
let metrics: MetricsServer;

beforeAll(async () => {
  metrics = await startMetricsServer({ port: 0, host: '127.0.0.1', logger });
});
afterAll(() => metrics.close());

/** Sum of one series' samples whose label set includes `labels` (exact `name{...}` match on each). */
function sample(text: string, name: string, labels: Record<string, string>): number {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`))
    .filter((line) => Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

describe('metrics server', () => {
  it('serves the registry at GET /metrics in the Prometheus text format, with process metrics', async () => {
    const res = await fetch(metrics.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await res.text();
    for (const name of [
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_heap_size_used_bytes',
      'process_cpu_seconds_total',
    ]) {
      expect(text).toMatch(new RegExp(`^# TYPE ${name} `, 'm'));
    }
    expect(text).toMatch(/^# TYPE nodejs_gc_duration_seconds histogram$/m);
    expect((await fetch(metrics.url, { method: 'HEAD' })).status).toBe(200);
  });

  it('serves nothing else', async () => {
    const base = metrics.url.replace(/\/metrics$/, '');
    expect((await fetch(`${base}/`)).status).toBe(404);
    expect((await fetch(`${base}/metrics/x`)).status).toBe(404);
    expect((await fetch(metrics.url, { method: 'POST', body: 'x' })).status).toBe(404);
  });
});

describe('gRPC metrics', () => {
  it('counts server and client calls by method and status code, and times them', async () => {
    const server = await startGrpcServer({
      port: 0,
      host: '127.0.0.1',
      logger,
      services: [
        defineService(commentsV1.CommentsServiceService, {
          getComments: async (req) => {
            if (req.videoId === 'private') throw Errors.videoUnavailable('private', 'private');
            if (req.videoId === 'bug') throw new Error('a bug');
            return {
              videoId: req.videoId,
              comments: [],
              commentsDisabled: false,
              totalCount: 0n,
              cached: false,
            };
          },
        }),
      ],
    });
    const client = createGrpcClient(commentsV1.CommentsServiceClient, `127.0.0.1:${server.port}`, { logger });
    try {
      const call = (videoId: string) =>
        client
          .getComments({
            videoId,
            max: 10,
            sort: commentsV1.CommentSort.COMMENT_SORT_TIME,
            forceRefresh: false,
            cachedOnly: false,
          })
          .catch(() => undefined);
      await call('a');
      await call('b');
      await call('private');
      await call('bug');
    } finally {
      client.close();
      await server.shutdown(1_000);
    }
    const text = await (await fetch(metrics.url)).text();
    const method = { grpc_service: 'subx.comments.v1.CommentsService', grpc_method: 'GetComments' };
    for (const side of ['server', 'client']) {
      expect(sample(text, `subx_grpc_${side}_handled_total`, { ...method, grpc_code: 'OK' }), side).toBe(2);
      expect(
        sample(text, `subx_grpc_${side}_handled_total`, { ...method, grpc_code: 'FAILED_PRECONDITION' }),
        side,
      ).toBe(1);
      expect(
        sample(text, `subx_grpc_${side}_handled_total`, { ...method, grpc_code: 'INTERNAL' }),
        side,
      ).toBe(1);
      const seconds =
        side === 'server' ? 'subx_grpc_server_handling_seconds' : 'subx_grpc_client_handling_seconds';
      expect(sample(text, `${seconds}_bucket`, { ...method, le: '+Inf' }), side).toBe(4);
    }
  });
});

/**
 * `/metrics` on its own port, apart from the public API (and from gRPC): the scrape endpoint is
 * never reachable through the gateway's ingress, needs no API key, and a scrape never competes with
 * API requests for the gateway's HTTP server.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@subx/ports';
import { portInUse } from '../startup-errors.ts';
import { METRICS_CONTENT_TYPE, collectProcessMetrics, scrape } from './registry.ts';

export interface StartMetricsServerOptions {
  /** 0 = any free port (tests, `npm start` with METRICS_PORT=0). */
  port: number;
  /** Default '0.0.0.0' (containers: Prometheus scrapes the pod address). */
  host?: string;
  logger?: Logger;
}

export interface MetricsServer {
  port: number;
  /** http://host:port/metrics */
  url: string;
  close(): Promise<void>;
}

export async function startMetricsServer(options: StartMetricsServerOptions): Promise<MetricsServer> {
  collectProcessMetrics();
  const host = options.host ?? '0.0.0.0';
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res
        .writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
        .end('not found: try GET /metrics\n');
      return;
    }
    scrape().then(
      (text) => {
        res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (err: unknown) => {
        options.logger?.error({ err }, 'metrics scrape failed');
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('scrape failed\n');
      },
    );
  });
  // A scrape is small and quick; a client that holds a socket open gets cut off.
  server.requestTimeout = 10_000;
  server.headersTimeout = 5_000;
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    // a busy port is a start-up problem a person can fix: one line naming METRICS_PORT
    const fail = (err: Error) => reject(portInUse(err, 'METRICS_PORT', options.port));
    server.once('error', fail);
    server.listen(options.port, host, () => {
      server.off('error', fail);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shownHost =
    host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const url = `http://${shownHost}:${port}/metrics`;
  options.logger?.info({ port, host }, 'metrics listening');
  return {
    port,
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

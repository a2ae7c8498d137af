// Container health probe shipped in every subx image (Dockerfile HEALTHCHECK, compose healthcheck).
// Kubernetes does not use it: the chart has native grpc/httpGet probes.
//
//   node healthcheck.ts                 mode and port from SUBX_SERVICE / PORT / GRPC_PORT
//   node healthcheck.ts grpc 50051      grpc.health.v1.Health/Check on 127.0.0.1:50051
//   node healthcheck.ts http 8080       GET http://127.0.0.1:8080/health/ready
//
// Exit 0 when healthy (SERVING / 2xx), 1 otherwise, with one line on stderr saying why.
// The gRPC check speaks the wire protocol over node:http2 directly so that the probe has no
// dependency on the service's node_modules and cannot break when a service changes its gRPC stack.
import http2 from 'node:http2';

const DEFAULT_GRPC_PORTS: Record<string, number> = {
  extractor: 50051,
  comments: 50052,
  ai: 50053,
  billing: 50054,
  jobs: 50055,
};
const SERVING = 1;
const STATUS_NAMES = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'];

type Probe = { mode: 'grpc' | 'http'; port: number };

function resolveProbe(argv: string[], env: NodeJS.ProcessEnv): Probe {
  const [modeArg, portArg] = argv;
  const service = env.SUBX_SERVICE ?? '';
  const mode = modeArg ?? (service === 'gateway' || service === 'dashboard' ? 'http' : 'grpc');
  if (mode !== 'grpc' && mode !== 'http') throw new Error(`unknown probe mode "${mode}" (grpc|http)`);
  // The dashboard listens on DASHBOARD_PORT (PORT is the gateway's inside `npm start`).
  const httpPort = service === 'dashboard' ? (env.DASHBOARD_PORT ?? '8090') : (env.PORT ?? '8080');
  const fallback = mode === 'http' ? httpPort : (env.GRPC_PORT ?? String(DEFAULT_GRPC_PORTS[service] ?? ''));
  const port = Number(portArg ?? fallback);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new Error(`no valid port for ${mode} probe (argument, PORT/GRPC_PORT or SUBX_SERVICE)`);
  }
  return { mode, port };
}

// HealthCheckRequest { string service = 1; } as protobuf bytes.
function encodeRequest(service: string): Buffer {
  const name = Buffer.from(service, 'utf8');
  if (name.length === 0) return Buffer.alloc(0);
  const len: number[] = [];
  for (let n = name.length; ; n >>>= 7) {
    if (n < 0x80) {
      len.push(n);
      break;
    }
    len.push((n & 0x7f) | 0x80);
  }
  return Buffer.concat([Buffer.from([0x0a, ...len]), name]);
}

// HealthCheckResponse { ServingStatus status = 1; } -> status (0 when absent, proto3 default).
function decodeStatus(message: Buffer): number {
  let i = 0;
  while (i < message.length) {
    const tag = message[i++] ?? 0;
    if (tag === 0x08) return message[i] ?? 0;
    throw new Error(`unexpected field tag 0x${tag.toString(16)} in HealthCheckResponse`);
  }
  return 0;
}

function grpcCheck(port: number, service: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const client = http2.connect(`http://127.0.0.1:${port}`);
    const timer = setTimeout(() => {
      client.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const done = (err?: Error): void => {
      clearTimeout(timer);
      client.close();
      if (err) reject(err);
      else resolve();
    };
    client.on('error', (err) => done(err));

    const body = encodeRequest(service);
    const frame = Buffer.alloc(5 + body.length);
    frame.writeUInt32BE(body.length, 1);
    body.copy(frame, 5);

    const req = client.request({
      ':method': 'POST',
      ':path': '/grpc.health.v1.Health/Check',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    const chunks: Buffer[] = [];
    let grpcStatus: string | undefined;
    let grpcMessage = '';
    const readStatus = (headers: http2.IncomingHttpHeaders): void => {
      const status = headers['grpc-status'];
      if (status !== undefined) grpcStatus = String(status);
      const message = headers['grpc-message'];
      if (message !== undefined) grpcMessage = decodeURIComponent(String(message));
    };
    req.on('response', readStatus); // a trailers-only answer carries grpc-status in the headers
    req.on('trailers', readStatus);
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', (err) => done(err));
    req.on('end', () => {
      if (grpcStatus !== '0') {
        done(new Error(`grpc-status ${grpcStatus ?? 'missing'}${grpcMessage ? `: ${grpcMessage}` : ''}`));
        return;
      }
      const payload = Buffer.concat(chunks);
      if (payload.length < 5) {
        done(new Error('empty HealthCheckResponse'));
        return;
      }
      try {
        const status = decodeStatus(payload.subarray(5, 5 + payload.readUInt32BE(1)));
        if (status === SERVING) done();
        else done(new Error(`status ${STATUS_NAMES[status] ?? status}`));
      } catch (err) {
        done(err as Error);
      }
    });
    req.end(frame);
  });
}

async function httpCheck(port: number, path: string, timeoutMs: number): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(timeoutMs) });
  await res.body?.cancel();
  if (!res.ok) throw new Error(`HTTP ${res.status} from ${path}`);
}

async function main(): Promise<void> {
  const timeoutMs = Number(process.env.HEALTHCHECK_TIMEOUT_MS ?? '2000');
  try {
    const probe = resolveProbe(process.argv.slice(2), process.env);
    if (probe.mode === 'grpc') {
      await grpcCheck(probe.port, process.env.HEALTHCHECK_GRPC_SERVICE ?? '', timeoutMs);
    } else {
      await httpCheck(probe.port, process.env.HEALTHCHECK_HTTP_PATH ?? '/health/ready', timeoutMs);
    }
    process.exitCode = 0;
  } catch (err) {
    console.error(`healthcheck: unhealthy: ${(err as Error).message}`);
    process.exitCode = 1;
  }
}

await main();

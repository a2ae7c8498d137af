/**
 * The extractor service alone, as its image runs it (services/extractor `npm start`: src/main.ts
 * with the OpenTelemetry preload), in a process of its own on a free port, with the in-memory cache
 * and bus (REDIS_URL and KAFKA_BROKERS empty) and no metrics listener, driven over gRPC.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as grpc from '@grpc/grpc-js';
import { extractorV1 } from '@subx/contracts';
import { freePort } from '@subx/testing/free-port';

export interface ExtractorProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** One GetTranscript call, bounded by `timeoutMs`. */
  getTranscript(
    request: Partial<extractorV1.GetTranscriptRequest>,
    timeoutMs: number,
  ): Promise<extractorV1.GetTranscriptResponse>;
  /** Closes the client, then SIGTERM, waiting up to 10 s for the process to exit. */
  stop(): Promise<void>;
}

/**
 * Starts the extractor with `env` on top of the defaults above (YOUTUBE_BASE_URL, LOG_LEVEL,
 * TRANSCRIBE_*, ...) and resolves once `ready` answers (retried every 250 ms for up to 60 s, or until
 * the process exits).
 */
export async function startExtractorProcess(
  env: Record<string, string>,
  ready: Partial<extractorV1.GetTranscriptRequest>,
): Promise<ExtractorProcess> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      '--disable-warning=ExperimentalWarning',
      '--import',
      '../../packages/service-kit/src/instrumentation.ts',
      'src/main.ts',
    ],
    {
      cwd: new URL('../../../services/extractor/', import.meta.url).pathname,
      env: {
        ...process.env,
        GRPC_PORT: String(port),
        METRICS_PORT: 'off',
        REDIS_URL: '',
        KAFKA_BROKERS: '',
        ...env,
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  const client = new extractorV1.ExtractorServiceClient(
    `127.0.0.1:${port}`,
    grpc.credentials.createInsecure(),
  );
  const getTranscript = (request: Partial<extractorV1.GetTranscriptRequest>, timeoutMs: number) =>
    new Promise<extractorV1.GetTranscriptResponse>((resolve, reject) => {
      client.getTranscript(
        extractorV1.GetTranscriptRequest.fromPartial(request),
        new grpc.Metadata(),
        { deadline: Date.now() + timeoutMs },
        (err, res) => (err ? reject(err) : resolve(res!)),
      );
    });
  const stop = async () => {
    client.close();
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000).unref())]);
    }
  };
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        await getTranscript(ready, 30_000);
        break;
      } catch (err) {
        if (Date.now() > deadline || child.exitCode !== null) throw err;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { child, pid: child.pid!, getTranscript, stop };
}

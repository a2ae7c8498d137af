// gRPC over TLS and mutual TLS (net/grpc-tls.ts) against a real grpc-js server, with certificates
// made for this test (a CA, a server certificate for 127.0.0.1, a client certificate).
import { commentsV1 } from '@subx/contracts';
import { createTestPki } from '@subx/testing/tls';
import type { TestPki } from '@subx/testing/tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config.ts';
import { createGrpcClient, defineService, startGrpcServer } from '../src/grpc/index.ts';
import type { StartedGrpcServer } from '../src/grpc/index.ts';
import { grpcTlsFromConfig } from '../src/net/grpc-tls.ts';
import type { GrpcTlsConfig } from '../src/net/grpc-tls.ts';
import { createLogger } from '../src/logger.ts';

const logger = createLogger({ service: 'grpc-tls-test', level: 'silent' });
let pki: TestPki;
const cleanup: (() => unknown)[] = [];

beforeAll(async () => {
  pki = await createTestPki();
});
afterAll(() => pki?.remove());
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function serve(config: GrpcTlsConfig): Promise<StartedGrpcServer> {
  const server = await startGrpcServer({
    port: 0,
    host: '127.0.0.1',
    logger,
    credentials: grpcTlsFromConfig(config).serverCredentials,
    services: [
      defineService(commentsV1.CommentsServiceService, {
        getComments: async (req) => ({
          videoId: req.videoId,
          comments: [],
          commentsDisabled: false,
          totalCount: 0n,
          cached: false,
        }),
      }),
    ],
  });
  cleanup.push(() => server.shutdown(1_000));
  return server;
}

async function call(port: number, config: GrpcTlsConfig): Promise<string> {
  const { client: tls } = grpcTlsFromConfig(config);
  const client = createGrpcClient(commentsV1.CommentsServiceClient, `127.0.0.1:${port}`, {
    credentials: tls.credentials,
    channelOptions: tls.channelOptions,
    defaultDeadlineMs: 3_000,
  });
  cleanup.push(() => client.close());
  try {
    const res = await client.getComments({
      videoId: 'abc',
      max: 1,
      sort: commentsV1.CommentSort.COMMENT_SORT_TIME,
      forceRefresh: false,
      cachedOnly: false,
    });
    return `ok ${res.videoId}`;
  } catch (err) {
    return `failed ${(err as { code?: string }).code ?? String(err)}`;
  }
}

describe('gRPC over TLS', () => {
  it('serves TLS with GRPC_TLS_CERT_FILE/KEY_FILE; clients verify it against GRPC_TLS_CA_FILE', async () => {
    const server = await serve({
      GRPC_TLS_CERT_FILE: pki.serverCertFile,
      GRPC_TLS_KEY_FILE: pki.serverKeyFile,
    });
    expect(await call(server.port, { GRPC_TLS_CA_FILE: pki.caFile })).toBe('ok abc');
    // A plaintext client does not get through, nor does one trusting another CA.
    expect(await call(server.port, {})).toMatch(/^failed /);
    expect(await call(server.port, { GRPC_TLS_CA_FILE: pki.otherCaFile })).toMatch(/^failed /);
    // The name in the certificate must match: 127.0.0.1 is in it, `elsewhere.test` is not.
    expect(
      await call(server.port, { GRPC_TLS_CA_FILE: pki.caFile, GRPC_TLS_SERVER_NAME: 'elsewhere.test' }),
    ).toMatch(/^failed /);
    expect(await call(server.port, { GRPC_TLS_CA_FILE: pki.caFile, GRPC_TLS_SERVER_NAME: 'localhost' })).toBe(
      'ok abc',
    );
  });

  it('requires a client certificate signed by GRPC_TLS_CLIENT_CA_FILE (mutual TLS)', async () => {
    const server = await serve({
      GRPC_TLS_CERT_FILE: pki.serverCertFile,
      GRPC_TLS_KEY_FILE: pki.serverKeyFile,
      GRPC_TLS_CLIENT_CA_FILE: pki.caFile,
    });
    expect(await call(server.port, { GRPC_TLS_CA_FILE: pki.caFile })).toMatch(/^failed /);
    expect(
      await call(server.port, {
        GRPC_TLS_CA_FILE: pki.caFile,
        GRPC_TLS_CERT_FILE: pki.clientCertFile,
        GRPC_TLS_KEY_FILE: pki.clientKeyFile,
      }),
    ).toBe('ok abc');
  });

  it('stays plaintext when nothing is set, and names bad variables without their values', async () => {
    const plain = grpcTlsFromConfig({});
    expect(plain.summary).toEqual({ server: 'plaintext', client: 'plaintext' });
    const server = await serve({});
    expect(await call(server.port, {})).toBe('ok abc');

    let error: unknown;
    try {
      grpcTlsFromConfig({
        GRPC_TLS_CERT_FILE: '/nonexistent/cert.pem',
        GRPC_TLS_CLIENT_CA_FILE: pki.caFile,
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const keys = (error as ConfigError).issues.map((i) => i.key);
    expect(keys).toEqual(expect.arrayContaining(['GRPC_TLS_CERT_FILE', 'GRPC_TLS_KEY_FILE']));
  });
});

/**
 * GRPC over mutual TLS between every service and every client, on the real
 * `npm start` (the gateway's four backends, the ai service's two upstreams, the four servers), with
 * certificates made for this test. The health of every service, an extract and a summary (gateway →
 * ai → extractor) go through; a plaintext client, and a TLS client without a certificate, do not.
 */
import { commentsV1 } from '@subx/contracts';
import { createGrpcClient, grpcTlsFromConfig } from '@subx/service-kit';
import { startFakeYouTube, videoIds } from '@subx/testing/fake-youtube';
import type { FakeYouTube } from '@subx/testing/fake-youtube';
import { createTestPki } from '@subx/testing/tls';
import type { TestPki } from '@subx/testing/tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNpmStart, type NpmStartProcess } from './npm-start-process.ts';

let pki: TestPki;
let youtube: FakeYouTube;
let system: NpmStartProcess;

beforeAll(async () => {
  pki = await createTestPki();
  youtube = await startFakeYouTube();
  system = await startNpmStart({
    YOUTUBE_BASE_URL: youtube.url,
    GRPC_TLS_CERT_FILE: pki.serverCertFile,
    GRPC_TLS_KEY_FILE: pki.serverKeyFile,
    GRPC_TLS_CLIENT_CA_FILE: pki.caFile,
    GRPC_TLS_CA_FILE: pki.caFile,
  });
});
afterAll(async () => {
  await system?.stop();
  await youtube?.close();
  pki?.remove();
});

async function post(path: string, body: unknown) {
  return fetch(`${system.base}${path}`, {
    method: 'POST',
    headers: { 'x-api-key': system.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
}

async function getComments(port: number, tls: Parameters<typeof grpcTlsFromConfig>[0]) {
  const { client: secure } = grpcTlsFromConfig(tls);
  const client = createGrpcClient(commentsV1.CommentsServiceClient, `127.0.0.1:${port}`, {
    ...secure,
    defaultDeadlineMs: 5_000,
  });
  try {
    await client.getComments({
      videoId: videoIds.manualAndAuto,
      max: 1,
      sort: commentsV1.CommentSort.COMMENT_SORT_TIME,
      forceRefresh: false,
      cachedOnly: true,
    });
    return 'answered';
  } catch (err) {
    // A served call that fails (say, not cached) is still an answer; the transport failing is not.
    return (err as { code?: string }).code === 'SERVICE_UNAVAILABLE' ? 'unreachable' : 'answered';
  } finally {
    client.close();
  }
}

describe('npm start with GRPC_TLS_* (mutual TLS everywhere)', () => {
  it('every service is healthy and the calls between them work', async () => {
    const health = await fetch(`${system.base}/health`, { signal: AbortSignal.timeout(10_000) });
    expect(await health.json()).toMatchObject({
      status: 'ok',
      services: { gateway: 'ok', extractor: 'ok', comments: 'ok', ai: 'ok', billing: 'ok' },
    });
    const extract = await post('/api/v1/extract', { url: `https://youtu.be/${videoIds.manualAndAuto}` });
    expect(extract.status).toBe(200);
    const summary = await post('/api/v1/summarize', {
      video_url: `https://youtu.be/${videoIds.manualAndAuto}`,
    });
    expect(summary.status).toBe(200);
  });

  it('the gRPC ports refuse plaintext and clients without a certificate', async () => {
    const port = Number(/comments :(\d+)/.exec(system.output())?.[1]);
    expect(port).toBeGreaterThan(0);
    expect(await getComments(port, {})).toBe('unreachable');
    expect(await getComments(port, { GRPC_TLS_CA_FILE: pki.caFile })).toBe('unreachable');
    expect(
      await getComments(port, {
        GRPC_TLS_CA_FILE: pki.caFile,
        GRPC_TLS_CERT_FILE: pki.clientCertFile,
        GRPC_TLS_KEY_FILE: pki.clientKeyFile,
      }),
    ).toBe('answered');
  });
});

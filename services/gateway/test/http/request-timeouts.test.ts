/**
 * A client that sends headers and then stalls its body must not hold a socket
 * (and the request's resources) forever. Real sockets: the stall is a half-sent request.
 */
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { KEYS, VIDEO_URL, buildTestGateway, transcript } from './support.ts';
import type { TestGateway } from './support.ts';

const RECEIVE_TIMEOUT_MS = 800;
// Node checks request timeouts periodically; the gateway checks every second. Slack for CI.
const BOUND_MS = RECEIVE_TIMEOUT_MS + 6_000;

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.app.close();
  gw = undefined;
});

async function listen(env: Record<string, string>) {
  gw = await buildTestGateway({ env });
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  return (gw.app.server.address() as { port: number }).port;
}

/** Sends `head` + part of a body, then nothing; resolves with what came back and when the socket closed. */
function stall(port: number, head: string, partialBody: string): Promise<{ ms: number; response: string }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let response = '';
    const socket = connect(port, '127.0.0.1', () => socket.write(head + partialBody));
    socket.on('data', (d) => (response += d.toString()));
    socket.on('error', reject);
    socket.on('close', () => resolve({ ms: performance.now() - t0, response }));
    // The test's own bound: a socket still open by then fails the test below.
    setTimeout(() => socket.destroy(), BOUND_MS + 5_000).unref();
  });
}

describe('request receive timeout', () => {
  it('a stalled request body is answered 400 and the socket closed within the bound', async () => {
    const port = await listen({ REQUEST_RECEIVE_TIMEOUT_MS: String(RECEIVE_TIMEOUT_MS) });
    const head =
      'POST /api/v1/extract HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n' +
      `x-api-key: ${KEYS.pro}\r\ncontent-length: 1000\r\n\r\n`;
    const { ms, response } = await stall(port, head, '{"url":');
    expect(ms).toBeLessThan(BOUND_MS);
    expect(response).toMatch(/^HTTP\/1\.1 400/);
    expect(response).toMatch(/connection: close/i);
    const body = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as {
      error: { code: string; message: string };
    };
    expect(body.error.code).toBe('INVALID_REQUEST');
    expect(body.error.message).toMatch(/did not arrive within/);
  });

  it('stalled headers are cut off too (408 from Node)', async () => {
    const port = await listen({ REQUEST_RECEIVE_TIMEOUT_MS: String(RECEIVE_TIMEOUT_MS) });
    const { ms, response } = await stall(port, 'GET /health HTTP/1.1\r\nHost: x\r\n', 'x-slow: ');
    expect(ms).toBeLessThan(BOUND_MS);
    expect(response).toMatch(/^HTTP\/1\.1 408/);
  });

  it('a response slower than the receive timeout is not cut: the bound covers receiving only', async () => {
    const port = await listen({ REQUEST_RECEIVE_TIMEOUT_MS: String(RECEIVE_TIMEOUT_MS) });
    gw!.backends.handlers.getTranscript = async (req) => {
      await new Promise((r) => setTimeout(r, RECEIVE_TIMEOUT_MS * 3));
      return transcript(req.videoId);
    };
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/extract`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEYS.pro },
      body: JSON.stringify({ url: VIDEO_URL }),
    });
    expect(res.status).toBe(200);
  });

  it('a body nobody reads (refused before parsing, the client still sending) never outlives its timer into a crash', async () => {
    const port = await listen({ REQUEST_RECEIVE_TIMEOUT_MS: String(RECEIVE_TIMEOUT_MS) });
    // text/plain is refused (415) before anything reads the body; the client keeps the connection
    // and never finishes the body. The receive timer fires later on a stream nobody listens to.
    let socket: ReturnType<typeof connect> | undefined;
    const answered = await new Promise<string>((resolve, reject) => {
      let response = '';
      socket = connect(port, '127.0.0.1', () =>
        socket!.write(
          `POST /api/v1/extract HTTP/1.1\r\nHost: x\r\ncontent-type: text/plain\r\nx-api-key: ${KEYS.pro}\r\ncontent-length: 1000\r\n\r\nhello`,
        ),
      );
      socket.on('data', (d) => {
        response += d.toString();
        if (response.includes('\r\n\r\n')) resolve(response);
      });
      socket.on('error', reject);
    });
    expect(answered).toMatch(/^HTTP\/1\.1 4\d\d/);
    // Past the receive timeout: the process is still up and answering.
    await new Promise((r) => setTimeout(r, RECEIVE_TIMEOUT_MS * 2));
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBeLessThan(600);
    socket?.destroy();
  });
});

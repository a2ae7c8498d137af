/**
 * Bounds on receiving a request (README, "When a dependency misbehaves"). Node's `requestTimeout` cuts stalled headers
 * (408), but once fastify is reading a body Node no longer enforces it, so a client could send
 * headers and then trickle or stall the body forever. This hook gives the body the same budget:
 * past it the body stream fails with 400 INVALID_REQUEST (the documented error shape) and the
 * connection is closed after that answer.
 */
import { PassThrough } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { Errors } from '@subx/errors';

export function installReceiveTimeout(app: FastifyInstance, timeoutMs: number): void {
  // Node enforces requestTimeout on a sweep (default every 30 s, read when listening): sweep every
  // second so stalled headers are cut close to their bound, not up to 30 s later.
  (app.server as { connectionsCheckingInterval?: number }).connectionsCheckingInterval = Math.min(
    1_000,
    timeoutMs,
  );

  app.addHook('preParsing', async (request, reply, payload) => {
    if (request.raw.complete) return payload;
    const body = new PassThrough();
    const timer = setTimeout(() => {
      reply.header('connection', 'close');
      payload.unpipe(body);
      body.destroy(
        Errors.invalidRequest(`The request body did not arrive within ${Math.ceil(timeoutMs / 1000)} s.`),
      );
    }, timeoutMs);
    timer.unref();
    const clear = () => clearTimeout(timer);
    payload.once('end', clear);
    payload.once('error', clear);
    payload.once('close', clear);
    // Answered without reading the body (415, 401, ...) while the client keeps sending: nothing
    // waits for the body any more, so neither does the timer.
    reply.raw.once('finish', clear);
    reply.raw.once('close', clear);
    // A body nobody reads has no 'error' listener of its own: destroying it with an error would
    // throw out of the timer and take the whole process down.
    body.on('error', () => {});
    payload.on('error', (error) => body.destroy(error));
    // fastify compares the bytes received with Content-Length through this counter.
    let received = 0;
    payload.on('data', (chunk: Buffer) => {
      received += chunk.length;
      (body as PassThrough & { receivedEncodedLength?: number }).receivedEncodedLength = received;
    });
    return payload.pipe(body);
  });
}

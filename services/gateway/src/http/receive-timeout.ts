/**
 * Bounds on receiving a request (README, "When a dependency misbehaves"). Node's `requestTimeout` cuts stalled headers
 * (408), but once fastify is reading a body Node no longer enforces it, so a client could send
 * headers and then trickle or stall the body forever. This hook gives the body the same budget:
 * past it the body stream fails with 400 INVALID_REQUEST (the documented error shape) and the
 * connection is closed after that answer.
 */
import type { FastifyInstance } from 'fastify';
import { Errors } from '@subx/errors';

export function installReceiveTimeout(app: FastifyInstance, timeoutMs: number): void {
  // Node enforces requestTimeout on a sweep (default every 30 s, read when listening): sweep every
  // second so stalled headers are cut close to their bound, not up to 30 s later.
  (app.server as { connectionsCheckingInterval?: number }).connectionsCheckingInterval = Math.min(
    1_000,
    timeoutMs,
  );

  // A callback hook without a stream in between: fastify reads `payload` itself, and only a body
  // that runs out of time is failed (before, every request piped its body through a PassThrough
  // with a timer of its own: a measurable part of a cached extract's CPU, in a profile).
  app.addHook('preParsing', (request, reply, payload, done) => {
    if (request.raw.complete) {
      done(null, payload);
      return;
    }
    const timer = setTimeout(() => {
      reply.header('connection', 'close');
      const error = Errors.invalidRequest(
        `The request body did not arrive within ${Math.ceil(timeoutMs / 1000)} s.`,
      );
      // fastify's body reader listens for 'error' and answers it in the documented shape; the
      // stream itself is not destroyed, which would take the socket (and the answer) with it.
      // With nobody reading any more there is no answer to give: the connection is closed.
      // (fastify reading is its 'data' listener; its 'error' listener comes with it.)
      if (payload.listenerCount('data') > 0 && payload.listenerCount('error') > 0)
        payload.emit('error', error);
      else request.raw.socket?.destroy();
    }, timeoutMs);
    timer.unref();
    const clear = () => clearTimeout(timer);
    // `on`, not `once`: each fires at most once on an object of this request alone, and a `once`
    // costs a bound wrapper and a removal on every request.
    payload.on('end', clear);
    // Answered (or the connection gone) without the body read to its end, e.g. 415 or 401 while
    // the client keeps sending: nothing waits for the body any more, so neither does the timer.
    reply.raw.on('close', clear);
    done(null, payload);
  });
}

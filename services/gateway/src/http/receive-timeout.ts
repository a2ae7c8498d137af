/**
 * Bounds on receiving a request (README, "When a dependency misbehaves"). Node's `requestTimeout` cuts stalled headers
 * (408), but once fastify is reading a body Node no longer enforces it, so a client could send
 * headers and then trickle or stall the body forever. This hook gives the body the same budget:
 * past it the body stream fails with 400 INVALID_REQUEST (the documented error shape) and the
 * connection is closed after that answer.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RequestPayload } from 'fastify';
import { Errors } from '@subx/errors';

interface Receiving {
  reply: FastifyReply;
  payload: RequestPayload;
  deadline: number;
}

export function installReceiveTimeout(app: FastifyInstance, timeoutMs: number): void {
  // Node enforces requestTimeout on a sweep (default every 30 s, read when listening): sweep every
  // second so stalled headers are cut close to their bound, not up to 30 s later.
  (app.server as { connectionsCheckingInterval?: number }).connectionsCheckingInterval = Math.min(
    1_000,
    timeoutMs,
  );

  // The bodies still arriving, each with the time it must have arrived by. One sweep fails those
  // past it, instead of a timer and two listeners for every request whose body was still on its
  // way (issue 27: on npm start's cached extract, skipping them measured 3.7% more throughput, the
  // median of 59 one-second pairs). A body is failed between timeoutMs and a quarter more (at most
  // 1 s more) after its request arrived.
  const receiving = new Map<FastifyRequest, Receiving>();
  const sweepEveryMs = Math.max(10, Math.min(1_000, Math.ceil(timeoutMs / 4)));
  let sweeper: NodeJS.Timeout | undefined;

  const fail = (request: FastifyRequest, { reply, payload }: Receiving): void => {
    reply.header('connection', 'close');
    const error = Errors.invalidRequest(
      `The request body did not arrive within ${Math.ceil(timeoutMs / 1000)} s.`,
    );
    // fastify's body reader listens for 'error' and answers it in the documented shape; the
    // stream itself is not destroyed, which would take the socket (and the answer) with it.
    // With nobody reading any more there is no answer to give: the connection is closed.
    // (fastify reading is its 'data' listener; its 'error' listener comes with it.)
    if (payload.listenerCount('data') > 0 && payload.listenerCount('error') > 0) payload.emit('error', error);
    else request.raw.socket?.destroy();
  };

  const sweep = (): void => {
    const now = Date.now();
    for (const [request, entry] of receiving) {
      // Arrived, answered or gone since (an answer removes its entry in onResponse; an aborted
      // request has none): nothing waits for this body any more.
      if (request.raw.complete || request.raw.destroyed || entry.reply.raw.writableEnded) {
        receiving.delete(request);
      } else if (now >= entry.deadline) {
        receiving.delete(request);
        fail(request, entry);
      }
    }
    if (receiving.size === 0) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  };

  app.addHook('preParsing', (request, reply, payload, done) => {
    if (!request.raw.complete) {
      receiving.set(request, { reply, payload, deadline: Date.now() + timeoutMs });
      sweeper ??= setInterval(sweep, sweepEveryMs).unref();
    }
    done(null, payload);
  });
  // Answered (with the body read to its end, or without it, e.g. 415 or 401 while the client keeps
  // sending): nothing waits for the body any more.
  app.addHook('onResponse', (request, _reply, done) => {
    receiving.delete(request);
    done();
  });
  app.addHook('onClose', (_app, done) => {
    clearInterval(sweeper);
    receiving.clear();
    done();
  });
}

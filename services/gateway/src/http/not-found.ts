/**
 * 404 NOT_FOUND for unknown paths, 405 METHOD_NOT_ALLOWED (with Allow) for known paths asked with
 * another method. A mirror router of every registered route answers "which methods exist here".
 * Both say what was probably meant (docs/api.md "Errors"): a 404 names the nearest operation of the
 * table (http/nearest-route.ts), a 405 the one method the path has; the same pair is in the body's
 * `suggestion` ({ method, path }), so a client can act on it without reading the message.
 */
import FindMyWay from 'find-my-way';
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { AppError } from '@subx/errors';
import { sendError } from './errors.ts';
import { nearestRoute } from './nearest-route.ts';
import type { RouteCandidate } from './nearest-route.ts';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** The operation's path as fastify routes it: OpenAPI's `{job_id}` is `:job_id` there. */
const routed = (c: RouteCandidate) => `${c.method} ${c.path.replace(/\{(\w+)\}/g, ':$1')}`;

/**
 * @param operations the operation table's method and path pairs: the suggestions of a 404, those
 * of them that this listener registered (the jobs routes only exist with the jobs module). None:
 * 404s suggest nothing (the admin listener).
 */
export function installNotFound(app: FastifyInstance, operations: readonly RouteCandidate[] = []): void {
  const mirror = FindMyWay({ ignoreTrailingSlash: true });
  const registered = new Set<string>();
  const noop = () => {};
  app.addHook('onRoute', (route) => {
    const methods = (Array.isArray(route.method) ? route.method : [route.method]) as HTTPMethods[];
    for (const method of methods) {
      registered.add(`${method} ${route.url}`);
      if ((METHODS as readonly string[]).includes(method) && !mirror.find(method as never, route.url)) {
        mirror.on(method as never, route.url, noop);
      }
    }
  });
  let candidates: RouteCandidate[] | null = null;
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = (request.url.split('?')[0] ?? '/').slice(0, 200);
    const allowed = METHODS.filter((m) => mirror.find(m as never, path) !== null);
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '));
      // HEAD goes with GET; a path with one real method has an obvious suggestion.
      const meant = allowed.filter((m) => m !== 'HEAD');
      const suggestion = meant.length === 1 ? { method: meant[0]!, path } : null;
      return sendError(
        request,
        reply,
        new AppError(
          'METHOD_NOT_ALLOWED',
          suggestion
            ? `${request.method} is not allowed on ${path}. Did you mean ${suggestion.method} ${path}?`
            : `${request.method} is not allowed on ${path}; use ${allowed.join(' or ')}.`,
          suggestion ? { details: { suggestion } } : {},
        ),
      );
    }
    candidates ??= operations.filter((o) => registered.has(routed(o)));
    const suggestion = nearestRoute(request.method, path, candidates);
    const near = suggestion ? ` Did you mean ${suggestion.method} ${suggestion.path}?` : '';
    return sendError(
      request,
      reply,
      new AppError(
        'NOT_FOUND',
        `No route ${request.method} ${path}.${near} The operations are listed at /docs.`,
        suggestion ? { details: { suggestion: { method: suggestion.method, path: suggestion.path } } } : {},
      ),
    );
  });
}

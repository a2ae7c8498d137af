/**
 * 404 NOT_FOUND for unknown paths, 405 METHOD_NOT_ALLOWED (with Allow) for known paths asked with
 * another method. A mirror router of every registered route answers "which methods exist here".
 */
import FindMyWay from 'find-my-way';
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { AppError } from '@subx/errors';
import { sendError } from './errors.ts';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

export function installNotFound(app: FastifyInstance): void {
  const mirror = FindMyWay({ ignoreTrailingSlash: true });
  const noop = () => {};
  app.addHook('onRoute', (route) => {
    const methods = (Array.isArray(route.method) ? route.method : [route.method]) as HTTPMethods[];
    for (const method of methods) {
      if ((METHODS as readonly string[]).includes(method) && !mirror.find(method as never, route.url)) {
        mirror.on(method as never, route.url, noop);
      }
    }
  });
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = (request.url.split('?')[0] ?? '/').slice(0, 200);
    const allowed = METHODS.filter((m) => mirror.find(m as never, path) !== null);
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '));
      return sendError(
        request,
        reply,
        new AppError(
          'METHOD_NOT_ALLOWED',
          `${request.method} is not allowed on ${path}; use ${allowed.join(' or ')}.`,
        ),
      );
    }
    return sendError(request, reply, new AppError('NOT_FOUND', `No route ${request.method} ${path}.`));
  });
}

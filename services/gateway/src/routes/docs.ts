import type { FastifyInstance } from 'fastify';
import { renderErrorReference, renderReference } from '../docs/html.ts';
import type { OpenApiDocument } from '../docs/openapi.ts';

export function registerDocs(app: FastifyInstance, openapi: OpenApiDocument): void {
  const json = JSON.stringify(openapi);
  const reference = renderReference(openapi);
  const errors = renderErrorReference();
  app.get('/openapi.json', async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send(json),
  );
  app.get('/docs', async (_request, reply) => reply.type('text/html; charset=utf-8').send(reference));
  app.get('/docs/errors', async (_request, reply) => reply.type('text/html; charset=utf-8').send(errors));
}

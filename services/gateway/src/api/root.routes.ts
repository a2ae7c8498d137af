/**
 * `GET /`: where to go from the bare origin (docs/api.md "Where to start"). One answer serves both
 * kinds of visitor without content negotiation: a 302 to the reference, which a browser follows,
 * with a small JSON body of links, which `curl` (not following redirects) prints. Not rate
 * limited, no key: it says nothing an anonymous visitor may not know.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';

/** Where `GET /` sends a browser: the reference page itself (`/docs` would redirect once more). */
const ROOT_REDIRECT = '/docs/';

export function registerRoot(app: FastifyInstance, version: string): void {
  const body = JSON.stringify({
    name: 'Subtitle Extraction API',
    version,
    message:
      'The API reference is at /docs, the OpenAPI 3.1 document at /openapi.json and a description for AI agents at /llms.txt. Operations live under /api/v1 and need an API key (X-API-Key or Authorization: Bearer).',
    links: {
      docs: '/docs',
      openapi: '/openapi.json',
      llms_txt: '/llms.txt',
      errors: '/docs/errors',
      health: '/health',
    },
  });
  const redirect = (reply: FastifyReply) =>
    reply.code(302).header('location', ROOT_REDIRECT).type('application/json; charset=utf-8');
  app.get('/', async (_request, reply) => redirect(reply).send(body));
  app.head('/', async (_request, reply) => redirect(reply).send());
}

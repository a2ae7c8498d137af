import type { FastifyInstance } from 'fastify';

/**
 * JSON bodies with fastify's own parser (prototype-poisoning protection included), except that an
 * empty body is no body: clients and proxies send `Content-Type: application/json` on bodyless
 * POSTs (`curl -X POST -H 'content-type: application/json'`), and a route whose body is optional
 * must accept that instead of answering 400. Routes that require a body still reject it, in their
 * own validation ("The request body is empty").
 */
export function acceptEmptyJsonBody(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    // A search for the first non-space character, not a trimmed copy of every body.
    if (!/\S/.test(text)) {
      done(null, undefined);
      return;
    }
    parseJson(request, text, done);
  });
}

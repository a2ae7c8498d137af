/**
 * CSRF protection of every state-changing request (all are POST forms), checked in preValidation,
 * before the body is validated and before any handler runs: signed in, the session's synchronizer
 * token; anonymous, a signed double-submit token (anonymous-csrf.ts), so anonymous visits store
 * nothing. `reply.csrfToken()` gives the token for this visitor's forms. /admin/* is a bearer-token
 * API, not cookie-authenticated, so it is not checked here.
 */
import fp from 'fastify-plugin';
import { messagePage } from '../views/pages.ts';
import { csrfMatches } from '../auth/sessions.ts';
import type { DashboardServices } from '../services.ts';
import { setCookie } from './session.ts';

declare module 'fastify' {
  interface FastifyReply {
    /** The CSRF token for this visitor's forms: the session's, or a stateless one (no store write). */
    csrfToken(): string;
  }
}

/** The `_csrf` field of a parsed form body ('' when absent). */
function formToken(body: unknown): string {
  const value = (body as Record<string, unknown> | undefined)?.['_csrf'];
  return typeof value === 'string' ? value : '';
}

export default fp(
  async (app, s: DashboardServices) => {
    app.decorateReply('csrfToken', function () {
      const request = this.request;
      if (request.dash.session) return request.dash.session.csrf;
      if (request.dash.anonymousCsrf) return request.dash.anonymousCsrf;
      const names = s.cookiesFor(request);
      const cookie = request.cookies[names.csrf];
      let token = s.anonymousCsrf.isSigned(cookie) ? cookie : null;
      if (!token) {
        token = s.anonymousCsrf.mint();
        setCookie(this, names, 'csrf', token, s.config.SESSION_TTL_MS);
      }
      request.dash.anonymousCsrf = token;
      return token;
    });

    app.addHook('preValidation', async (request, reply) => {
      if (request.method === 'GET' || request.url.startsWith('/admin/')) return;
      const token = formToken(request.body);
      const valid = request.dash.session
        ? csrfMatches(request.dash.session, token)
        : s.anonymousCsrf.matches(request.cookies[s.cookiesFor(request).csrf], token);
      if (!valid) {
        return reply.page(
          (ctx) =>
            messagePage(
              ctx,
              'Form expired',
              'This form has expired or did not come from this site. Go back, reload the page and try again.',
              'error',
            ),
          403,
        );
      }
    });
  },
  { name: 'csrf', dependencies: ['session'] },
);

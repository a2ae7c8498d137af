/**
 * The signed-in session (sessions.ts) as a plugin: each request's `request.dash` holds the session
 * and its person, or nulls for anonymous visitors; `reply.startSession(user)` signs a person in
 * (new id and CSRF token: no fixation) and `reply.endSession()` signs out. A session whose person's
 * epoch moved on (password reset, confirmation by the owner) is destroyed on sight. Probes and
 * static files never look a session up.
 */
import type { FastifyReply } from 'fastify';
import fp from 'fastify-plugin';
import type { CookieNames } from '../auth/cookies.ts';
import type { Session } from '../auth/sessions.ts';
import type { DashboardServices } from '../services.ts';
import type { UserDoc } from '../auth/users.ts';
import type { CurrentWorkspace } from '../workspaces/workspace-access.ts';

interface RequestState {
  /** Signed-in visitors only. */
  session: Session | null;
  user: UserDoc | null;
  /** An anonymous visitor's CSRF token, once this request has one. */
  anonymousCsrf?: string;
  /** The person's current workspace and role, once looked up (workspace-access.ts); null: none. */
  workspace?: CurrentWorkspace | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    dash: RequestState;
  }
  interface FastifyReply {
    /** Signs `user` in: a new session (the request's old one, if any, is destroyed) and its cookie. */
    startSession(user: UserDoc): Promise<void>;
    /** Signs out: the session is destroyed; `clearCookie` also removes the cookie from the browser. */
    endSession(options?: { clearCookie?: boolean }): Promise<void>;
  }
}

export default fp(
  async (app, s: DashboardServices) => {
    app.decorateRequest('dash', null as unknown as RequestState);

    app.decorateReply('startSession', async function (user: UserDoc) {
      const request = this.request;
      if (request.dash.session) await s.sessions.destroy(request.dash.session.id);
      const session = await s.sessions.create(user._id, user.session_epoch);
      request.dash = { session, user };
      setCookie(this, s.cookiesFor(request), 'session', session.id, s.config.SESSION_TTL_MS);
    });

    app.decorateReply('endSession', async function (options: { clearCookie?: boolean } = {}) {
      const request = this.request;
      if (request.dash.session) await s.sessions.destroy(request.dash.session.id);
      request.dash = { session: null, user: null };
      if (options.clearCookie) {
        const names = s.cookiesFor(request);
        void this.clearCookie(names.session, { path: '/', secure: names.secure });
      }
    });

    app.addHook('onRequest', async (request) => {
      request.dash = { session: null, user: null };
      // Probes and static files need no session (and a probe must not depend on a session lookup).
      if (
        request.url.startsWith('/static/') ||
        request.url.startsWith('/health/') ||
        request.url === '/favicon.ico'
      )
        return;
      const session = await s.sessions.load(request.cookies[s.cookiesFor(request).session]);
      if (!session) return;
      const user = await s.users.byId(session.userId);
      if (user && session.epoch === user.session_epoch) request.dash = { session, user };
      else await s.sessions.destroy(session.id);
    });
  },
  { name: 'session', dependencies: ['@fastify/cookie'] },
);

/** Sets one of the dashboard's cookies; __Host- ones must be Secure with Path=/ and no Domain (cookies.ts). */
export function setCookie(
  reply: FastifyReply,
  names: CookieNames,
  kind: 'session' | 'csrf',
  value: string,
  ttlMs: number,
): void {
  void reply.setCookie(names[kind], value, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: names.secure,
    maxAge: Math.floor(ttlMs / 1000),
  });
}

/**
 * Step-up: a signed-in person enters the password again (before operator pages and actions, after
 * OPERATOR_REAUTH_MS). CSRF-checked and throttled like sign-in; only operator-area paths may be
 * the target afterwards (no open redirect).
 */
import type { FastifyInstance } from 'fastify';
import { field, formSchema } from '../views/forms.ts';
import { reauthPage } from '../views/pages.ts';
import { MAX_PASSWORD_LENGTH, verifyPassword } from '../auth/passwords.ts';
import { safeNext, signedInUser } from '../auth/guards.ts';
import type { DashboardServices } from '../services.ts';
import { signInSubjects } from '../auth/sign-in-throttle.ts';

const reauthForm = formSchema('next', 'password');

export default async function reauthRoutes(app: FastifyInstance, s: DashboardServices) {
  app.get(
    '/reauth',
    { config: { permission: 'signed-in' }, preHandler: s.guards.signedIn },
    async (request, reply) => {
      const next = safeNext(String((request.query as Record<string, unknown>).next ?? ''));
      return reply.page((ctx) => reauthPage(ctx, next));
    },
  );

  app.post(
    '/reauth',
    { config: { permission: 'signed-in' }, schema: { body: reauthForm }, preHandler: s.guards.signedIn },
    async (request, reply) => {
      const user = signedInUser(request);
      const next = safeNext(field(request.body, 'next'));
      const password = field(request.body, 'password');
      const decision = await s.throttle.begin(signInSubjects(request.ip, user.email));
      if (!decision.allowed) {
        const seconds = reply.retryAfter(decision.waitMs);
        const text = `Too many failed attempts. Try again in ${seconds} s.`;
        return reply.page((ctx) => reauthPage(ctx, next, { kind: 'error', text }), 429);
      }
      const ok =
        password.length <= MAX_PASSWORD_LENGTH && (await verifyPassword(password, user.password_hash));
      if (!ok) {
        await decision.attempt.failed();
        return reply.page((ctx) => reauthPage(ctx, next, { kind: 'error', text: 'Wrong password.' }), 401);
      }
      await decision.attempt.succeeded();
      request.dash.session = await s.sessions.reauthenticated(request.dash.session!);
      if (s.operators.isOperator(user)) {
        s.audit('operator.reauthenticated', { actor: { email: user.email, user_id: user._id } });
      }
      return reply.redirect(next, 303);
    },
  );
}

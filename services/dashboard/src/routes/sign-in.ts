/**
 * Sign-in and sign-out. Attempts are throttled per client network and per email (sign-in-throttle.ts)
 * and counted before scrypt runs; an unknown address costs one scrypt too, so timing does not tell
 * who has an account.
 */
import { roleMay } from '@subx/contracts/workspaces';
import { currentWorkspaceOf } from '../workspaces/workspace-access.ts';
import type { FastifyInstance } from 'fastify';
import { field, formSchema } from '../views/forms.ts';
import { signInPage } from '../views/pages.ts';
import { MAX_PASSWORD_LENGTH, hashPassword, needsRehash, verifyPassword } from '../auth/passwords.ts';
import type { DashboardServices } from '../services.ts';
import { signInSubjects } from '../auth/sign-in-throttle.ts';
import { normalizeEmail } from '../auth/users.ts';
import { reportMemberEvent } from '../auth/gateway-audit.ts';

const signInForm = formSchema('email', 'password');

export default async function signInRoutes(app: FastifyInstance, s: DashboardServices) {
  // Home: the keys, or for a role that may not read them (billing), the usage.
  app.get('/', { config: { permission: 'public' } }, async (request, reply) => {
    const user = request.dash.user;
    if (!user) return reply.redirect('/sign-in', 303);
    const workspace = user.email_verified ? await currentWorkspaceOf(request) : null;
    return reply.redirect(workspace && !roleMay(workspace.role, 'keys:read') ? '/usage' : '/keys', 303);
  });

  app.get('/sign-in', { config: { permission: 'public' } }, async (_request, reply) =>
    reply.page((ctx) => signInPage(ctx)),
  );

  app.post(
    '/sign-in',
    { config: { permission: 'public' }, schema: { body: signInForm } },
    async (request, reply) => {
      const email = normalizeEmail(field(request.body, 'email'));
      const password = field(request.body, 'password');
      const decision = await s.throttle.begin(signInSubjects(request.ip, email));
      if (!decision.allowed) {
        const seconds = reply.retryAfter(decision.waitMs);
        const text = `Too many failed attempts. Try again in ${seconds} s.`;
        return reply.page((ctx) => signInPage(ctx, { kind: 'error', text }, email ?? ''), 429);
      }
      const user = email && password.length <= MAX_PASSWORD_LENGTH ? await s.users.byEmail(email) : null;
      // Unknown addresses cost one scrypt too, so timing does not tell who has an account.
      const ok = user
        ? await verifyPassword(password, user.password_hash)
        : (await verifyPassword(password, await s.decoy), false);
      if (!user || !ok) {
        await decision.attempt.failed();
        // For the account's owner to see: a wrong password for their address. Not awaited, so the
        // answer takes as long whether or not the address has an account.
        if (user) {
          void reportMemberEvent(request.gateway, request.log, {
            action: 'sign_in.failed',
            accountId: user.account_id,
            memberId: null,
            sourceIp: request.ip,
          });
        }
        return reply.page(
          (ctx) => signInPage(ctx, { kind: 'error', text: 'Wrong email or password.' }, email ?? ''),
          401,
        );
      }
      await decision.attempt.succeeded();
      if (needsRehash(user.password_hash, s.config.PASSWORD_SCRYPT_N)) {
        await s.users.update(user._id, {
          password_hash: await hashPassword(password, s.config.PASSWORD_SCRYPT_N),
        });
      }
      s.operators.noteConfiguredGrant(user, 'sign-in');
      await reportMemberEvent(request.gateway, request.log, {
        action: 'sign_in.succeeded',
        accountId: user.account_id,
        memberId: user._id,
        sourceIp: request.ip,
      });
      await reply.startSession(user);
      return reply.redirect('/keys', 303);
    },
  );

  app.post(
    '/sign-out',
    { config: { permission: 'public' }, schema: { body: formSchema() } },
    async (_request, reply) => {
      await reply.endSession({ clearCookie: true });
      return reply.redirect('/sign-in', 303);
    },
  );
}

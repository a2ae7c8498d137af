/**
 * The mailed one-time links: confirming the address (/verify, and /verify/resend for a new link)
 * and resetting a forgotten password (/forgot, /reset). A GET of a link only shows a page with a
 * confirm button (nothing changes on GET, and mail scanners that follow links do not use it up);
 * the POST redeems it. A reset ends every session of the person.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { field, formSchema } from '../forms.ts';
import type { LinkPurpose } from '../one-time-links.ts';
import type { PageContext } from '../pages.ts';
import { forgotPage, inboxPage, messagePage, resetPage, verifyPage } from '../pages.ts';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, hashPassword } from '../passwords.ts';
import { signedInUser } from '../plugins/guards.ts';
import type { DashboardServices } from '../services.ts';
import { EMAIL_FREE_FAILURES } from '../sign-in-throttle.ts';
import { normalizeEmail } from '../users.ts';

const tokenForm = formSchema('token');
const resetForm = formSchema('token', 'password');
const emailForm = formSchema('email');

const linkExpired = (reply: FastifyReply) =>
  reply.page(
    (ctx) => messagePage(ctx, 'Link expired', 'This link is invalid, used or expired.', 'error'),
    400,
  );

export default async function emailLinkRoutes(app: FastifyInstance, s: DashboardServices) {
  /** GET of a mailed link: a page with a form (nothing changes on GET), or "expired". */
  function linkPage(purpose: LinkPurpose, render: (ctx: PageContext, token: string) => string) {
    return async (request: FastifyRequest, reply: FastifyReply) => {
      const token = String((request.query as Record<string, unknown>).token ?? '');
      if ((await s.links.peek(purpose, token)) === null) return linkExpired(reply);
      return reply.page((ctx) => render(ctx, token));
    };
  }

  app.get('/verify', linkPage('verify', verifyPage));

  app.post('/verify', { schema: { body: tokenForm } }, async (request, reply) => {
    const token = field(request.body, 'token');
    const userId = await s.links.peek('verify', token);
    let user = userId ? await s.users.byId(userId) : null;
    if (!user) return linkExpired(reply);
    if (!user.account_id) {
      // The gateway account comes with a key nobody has seen: revoke it, so the first key is the
      // one this person generates and sees. Done before the link is used up, so a gateway outage
      // leaves the link working for another try.
      const { account_id: accountId } = await request.gateway.createAccount(user.email);
      await request.gateway.revokeKey(accountId);
      user = (await s.users.attachAccount(user._id, accountId)) ?? user;
    }
    if ((await s.links.redeem('verify', token)) === null) return linkExpired(reply);
    await s.users.update(user._id, { email_verified: true });
    // Confirming ends every other session of the account (one opened by whoever signed up with
    // this address before its owner did); the confirming person, if signed in as it, stays in.
    await s.users.endSessions(user._id);
    const confirmed = await s.users.byId(user._id);
    if (confirmed && request.dash.user?._id === confirmed._id) await reply.startSession(confirmed);
    if (confirmed) s.operators.noteConfiguredGrant(confirmed, 'confirmation');
    return reply.page((ctx) =>
      messagePage(
        ctx,
        'Email confirmed',
        request.dash.user
          ? 'Your address is confirmed. You can generate an API key now.'
          : 'Your address is confirmed. Sign in to generate an API key.',
      ),
    );
  });

  app.post(
    '/verify/resend',
    { schema: { body: formSchema() }, preHandler: s.guards.signedIn },
    async (request, reply) => {
      const user = signedInUser(request);
      if (!user.email_verified) await s.sendLink(user, 'verify');
      return reply.page((ctx) => inboxPage(ctx, `We sent a new link to ${user.email}.`, s.mailsShownIn));
    },
  );

  app.get('/forgot', async (_request, reply) => reply.page((ctx) => forgotPage(ctx)));

  app.post('/forgot', { schema: { body: emailForm } }, async (request, reply) => {
    const email = normalizeEmail(field(request.body, 'email'));
    const user = email ? await s.users.byEmail(email) : null;
    if (user) await s.sendLink(user, 'reset');
    return reply.page((ctx) =>
      inboxPage(
        ctx,
        'If an account uses this address, we sent it a link to reset the password.',
        s.mailsShownIn,
      ),
    );
  });

  app.get(
    '/reset',
    linkPage('reset', (ctx, token) => resetPage(ctx, token)),
  );

  app.post('/reset', { schema: { body: resetForm } }, async (request, reply) => {
    const token = field(request.body, 'token');
    const password = field(request.body, 'password');
    if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
      const text = `The password needs ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters.`;
      return reply.page((ctx) => resetPage(ctx, token, { kind: 'error', text }), 400);
    }
    const userId = await s.links.redeem('reset', token);
    const user = userId ? await s.users.byId(userId) : null;
    if (!user) return linkExpired(reply);
    // Every existing session of this person ends (the old password may be what leaked).
    await s.users.update(user._id, {
      password_hash: await hashPassword(password, s.config.PASSWORD_SCRYPT_N),
    });
    await s.users.endSessions(user._id);
    await s.throttle.clear({ kind: 'email', value: user.email, free: EMAIL_FREE_FAILURES });
    await reply.endSession();
    return reply.page((ctx) =>
      messagePage(ctx, 'Password changed', 'Your password is changed. Sign in with the new one.'),
    );
  });
}

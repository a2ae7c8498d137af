/**
 * The mailed one-time links: confirming the address (/verify, and /verify/resend for a new link)
 * and resetting a forgotten password (/forgot, /reset). A GET of a link only shows a page with a
 * form (nothing changes on GET, and mail scanners that follow links do not use it up); the POST
 * redeems it.
 *
 * Confirming proves the mailbox and who chose the password: the link's POST carries the account's
 * password, or a new one, or comes from a session of the account. A reset ends every session of
 * the person and replaces the account's API key (the old password may be what leaked, and a key
 * made by whoever held it must not outlive it).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { field, formSchema } from '../views/forms.ts';
import type { SecuredAccount } from '../gateway/client.ts';
import type { LinkPurpose } from '../auth/one-time-links.ts';
import type { PageContext } from '../views/pages.ts';
import {
  forgotPage,
  inboxPage,
  messagePage,
  passwordChangedPage,
  resetPage,
  verifyPage,
} from '../views/pages.ts';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, hashPassword, verifyPassword } from '../auth/passwords.ts';
import { signedInUser } from '../auth/guards.ts';
import type { DashboardServices } from '../services.ts';
import { EMAIL_FREE_FAILURES } from '../auth/sign-in-throttle.ts';
import { reportMemberEvent } from '../auth/gateway-audit.ts';
import { normalizeEmail } from '../auth/users.ts';
import { startWorkspace } from '../workspaces/new-workspace.ts';

const verifyForm = formSchema('token', 'password', 'new_password');
const resetForm = formSchema('token', 'password');
const emailForm = formSchema('email');

const linkExpired = (reply: FastifyReply) =>
  reply.page(
    (ctx) => messagePage(ctx, 'Link expired', 'This link is invalid, used or expired.', 'error'),
    400,
  );

/** A confirmation's gateway calls take two deadlines at most; the lock outlives them. */
const CONFIRM_LOCK_MS = 30_000;

/**
 * Takes the account back from whoever held the old password: the key is replaced if it works (a
 * revoked one stays revoked), the watches and jobs it made are stopped, and the webhook secret is
 * replaced with no grace period. null when the person has no account at the gateway yet.
 */
async function secureAccount(
  request: FastifyRequest,
  accountId: string | null,
): Promise<SecuredAccount | null> {
  if (!accountId) return null;
  return request.gateway.secureAccount(accountId, 'replace');
}

export default async function emailLinkRoutes(app: FastifyInstance, s: DashboardServices) {
  /** GET of a mailed link: a page with a form (nothing changes on GET), or "expired". */
  function linkPage(
    purpose: LinkPurpose,
    render: (ctx: PageContext, token: string, signedInAsOwner: boolean) => string,
  ) {
    return async (request: FastifyRequest, reply: FastifyReply) => {
      const token = String((request.query as Record<string, unknown>).token ?? '');
      const userId = await s.links.peek(purpose, token);
      if (userId === null) return linkExpired(reply);
      return reply.page((ctx) => render(ctx, token, request.dash.user?._id === userId));
    };
  }

  app.get(
    '/verify',
    { config: { permission: 'public' } },
    linkPage('verify', (ctx, token, signedInAsOwner) => verifyPage(ctx, token, { signedInAsOwner })),
  );

  app.post(
    '/verify',
    { config: { permission: 'public' }, schema: { body: verifyForm } },
    async (request, reply) => {
      const token = field(request.body, 'token');
      const userId = await s.links.peek('verify', token);
      let user = userId ? await s.users.byId(userId) : null;
      if (!user) return linkExpired(reply);
      const signedInAsOwner = request.dash.user?._id === user._id;
      const refuse = (text: string) =>
        reply.page((ctx) => verifyPage(ctx, token, { signedInAsOwner }, { kind: 'error', text }), 400);
      // Who controls the account from now on: the password it holds (proved here), a new one chosen
      // by whoever reads the mailbox, or the signed-in person who chose it.
      const newPassword = field(request.body, 'new_password');
      let newHash: string | null = null;
      if (newPassword) {
        if (newPassword.length < MIN_PASSWORD_LENGTH || newPassword.length > MAX_PASSWORD_LENGTH) {
          return refuse(`The password needs ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters.`);
        }
        newHash = await hashPassword(newPassword, s.config.PASSWORD_SCRYPT_N);
      } else if (!signedInAsOwner) {
        const password = field(request.body, 'password');
        const known =
          password.length <= MAX_PASSWORD_LENGTH && (await verifyPassword(password, user.password_hash));
        if (!known) {
          return refuse(
            'That is not the password this address signed up with. Enter it, or choose a new password below.',
          );
        }
      }
      if (!user.account_id) {
        // One confirmation at a time per person: two at once would each make a gateway account and
        // leave one of them orphaned (attachAccount keeps the first).
        const lock = `dashboard:verify-account:${user._id}`;
        if (!(await s.kv.setIfAbsent(lock, '1', { ttlMs: CONFIRM_LOCK_MS }))) {
          return reply.page(
            (ctx) =>
              messagePage(ctx, 'Confirming', 'This address is being confirmed. Reload in a moment.', 'error'),
            409,
          );
        }
        try {
          // Read again under the lock: a confirmation that just finished attached its account.
          user = (await s.users.byId(user._id)) ?? user;
          if (!user.account_id) {
            // Done before the link is used up, so a gateway outage leaves the link working for
            // another try.
            const accountId = await startWorkspace(request.gateway, user);
            user = (await s.users.attachAccount(user._id, accountId)) ?? user;
          }
        } finally {
          await s.kv.delete(lock);
        }
      }
      if ((await s.links.redeem('verify', token)) === null) return linkExpired(reply);
      await s.users.update(user._id, {
        email_verified: true,
        ...(newHash === null ? {} : { password_hash: newHash }),
      });
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
    },
  );

  app.post(
    '/verify/resend',
    { config: { permission: 'signed-in' }, schema: { body: formSchema() }, preHandler: s.guards.signedIn },
    async (request, reply) => {
      const user = signedInUser(request);
      if (!user.email_verified) await s.sendLink(user, 'verify');
      return reply.page((ctx) => inboxPage(ctx, `We sent a new link to ${user.email}.`, s.mailsShownIn));
    },
  );

  app.get('/forgot', { config: { permission: 'public' } }, async (_request, reply) =>
    reply.page((ctx) => forgotPage(ctx)),
  );

  app.post(
    '/forgot',
    { config: { permission: 'public' }, schema: { body: emailForm } },
    async (request, reply) => {
      const email = normalizeEmail(field(request.body, 'email'));
      const user = email ? await s.users.byEmail(email) : null;
      // The mail leaves in the background (link-mail.ts); an unknown address does the same store
      // work (the per-address mail cap is counted either way), so timing does not tell who has one.
      if (user) await s.sendLink(user, 'reset');
      else if (email) await s.limits.mayMail('reset', email);
      return reply.page((ctx) =>
        inboxPage(
          ctx,
          'If an account uses this address, we sent it a link to reset the password.',
          s.mailsShownIn,
        ),
      );
    },
  );

  app.get(
    '/reset',
    { config: { permission: 'public' } },
    linkPage('reset', (ctx, token) => resetPage(ctx, token)),
  );

  app.post(
    '/reset',
    { config: { permission: 'public' }, schema: { body: resetForm } },
    async (request, reply) => {
      const token = field(request.body, 'token');
      const password = field(request.body, 'password');
      if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
        const text = `The password needs ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters.`;
        return reply.page((ctx) => resetPage(ctx, token, { kind: 'error', text }), 400);
      }
      const userId = await s.links.peek('reset', token);
      const user = userId ? await s.users.byId(userId) : null;
      if (!user) return linkExpired(reply);
      // The key first, before the link is used up: a gateway outage leaves the link for another try
      // and never a changed password beside a key whoever held the old one may have made.
      const secured = await secureAccount(request, user.account_id);
      if ((await s.links.redeem('reset', token)) === null) return linkExpired(reply);
      // Every existing session of this person ends (the old password may be what leaked).
      await s.users.update(user._id, {
        password_hash: await hashPassword(password, s.config.PASSWORD_SCRYPT_N),
      });
      await s.users.endSessions(user._id);
      await s.throttle.clear({ kind: 'email', value: user.email, free: EMAIL_FREE_FAILURES });
      await reply.endSession();
      await reportMemberEvent(request.gateway, request.log, {
        action: 'password.reset',
        accountId: user.account_id,
        memberId: user._id,
        sourceIp: request.ip,
      });
      s.audit('account.password_reset', {
        actor: { email: user.email, user_id: user._id },
        target: { user_id: user._id, ...(user.account_id ? { account_id: user.account_id } : {}) },
        details: {
          key_replaced: Boolean(secured?.api_key),
          watches_paused: secured?.paused_watches.length ?? 0,
          jobs_canceled: secured?.canceled_jobs.length ?? 0,
        },
      });
      return reply.page((ctx) => passwordChangedPage(ctx, secured));
    },
  );
}

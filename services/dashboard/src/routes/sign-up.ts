/**
 * Sign-up. Throttled per client network before scrypt runs; the page answers the same whether or
 * not the address was taken, so sign-up does not reveal who has an account.
 *
 * An address is held by a pending sign-up only while its confirmation link works: a second
 * sign-up then changes nothing of the pending account (no password, session or link of it ends,
 * so nobody can watch for the owner's sign-up and race it), and mails the address a fresh link
 * with which its owner chooses their own password. Confirming asks for the account's password or
 * a new one (email-links.ts), so whoever signed up first with someone else's address can never
 * have their password confirmed by the owner's click.
 */
import type { FastifyInstance } from 'fastify';
import { field, formSchema } from '../views/forms.ts';
import { inboxPage, signUpPage } from '../views/pages.ts';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, hashPassword } from '../auth/passwords.ts';
import type { DashboardServices } from '../services.ts';
import { throttleNetwork } from '../auth/throttle-network.ts';
import { normalizeEmail } from '../auth/users.ts';

/** A sign-up for an address that has an account already. */
async function answerTakenAddress(s: DashboardServices, email: string, hash: string) {
  const existing = await s.users.byEmail(email);
  if (!existing || existing.email_verified) return;
  if (await s.links.hasLive('verify', existing._id)) {
    // The newest link, mailed to the address: whoever reads it there chooses the password.
    await s.sendLink(existing, 'contested', { replacing: true });
    return;
  }
  // Nobody can confirm the pending account any more (its link expired): the address is free again.
  const replaced = await s.users.replacePending(email, hash);
  if (replaced) await s.sendLink(replaced, 'verify', { replacing: true });
}

const signUpForm = formSchema('email', 'password');

export default async function signUpRoutes(app: FastifyInstance, s: DashboardServices) {
  app.get('/sign-up', { config: { permission: 'public' } }, async (_request, reply) =>
    reply.page((ctx) => signUpPage(ctx)),
  );

  app.post(
    '/sign-up',
    { config: { permission: 'public' }, schema: { body: signUpForm } },
    async (request, reply) => {
      const email = normalizeEmail(field(request.body, 'email'));
      const password = field(request.body, 'password');
      if (!email) {
        return reply.page(
          (ctx) => signUpPage(ctx, { kind: 'error', text: 'Enter a valid email address.' }),
          400,
        );
      }
      if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
        const text = `The password needs ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters.`;
        return reply.page((ctx) => signUpPage(ctx, { kind: 'error', text }, email), 400);
      }
      // Per client network, before scrypt runs: a sign-up flood cannot burn the CPU.
      const waitMs = await s.limits.signUpWaitMs(throttleNetwork(request.ip));
      if (waitMs > 0) {
        const seconds = reply.retryAfter(waitMs);
        const text = `Too many sign-ups from your network. Try again in ${seconds} s.`;
        return reply.page((ctx) => signUpPage(ctx, { kind: 'error', text }, email), 429);
      }
      const hash = await hashPassword(password, s.config.PASSWORD_SCRYPT_N);
      const created = await s.users.create(email, hash, s.now());
      if (created) await s.sendLink(created, 'verify');
      else await answerTakenAddress(s, email, hash);
      // The same answer whether or not the address was taken: sign-up does not reveal who has an account.
      return reply.page((ctx) =>
        inboxPage(
          ctx,
          `We sent a link to ${email}. Open it to confirm your address, then sign in.`,
          s.mailsShownIn,
        ),
      );
    },
  );
}

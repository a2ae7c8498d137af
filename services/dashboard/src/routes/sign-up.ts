/**
 * Sign-up. Throttled per client network before scrypt runs; a sign-up for an address nobody has
 * confirmed replaces the pending account; the page answers the same whether or not the address
 * was taken, so sign-up does not reveal who has an account.
 */
import type { FastifyInstance } from 'fastify';
import { field, formSchema } from '../forms.ts';
import { inboxPage, signUpPage } from '../pages.ts';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, hashPassword } from '../passwords.ts';
import type { DashboardServices } from '../services.ts';
import { throttleNetwork } from '../throttle-network.ts';
import { normalizeEmail } from '../users.ts';

const signUpForm = formSchema('email', 'password');

export default async function signUpRoutes(app: FastifyInstance, s: DashboardServices) {
  app.get('/sign-up', async (_request, reply) => reply.page((ctx) => signUpPage(ctx)));

  app.post('/sign-up', { schema: { body: signUpForm } }, async (request, reply) => {
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
    // A sign-up for an address nobody confirmed yet replaces the pending one (pre-account hijack:
    // whoever signed up first with someone else's address keeps no password, session or link).
    // Its links die before its password changes, so an old link cannot confirm the new password.
    const created = await s.users.create(email, hash, s.now());
    const pending = created ? null : await s.users.byEmail(email);
    if (pending && !pending.email_verified) await s.links.revokeAll('verify', pending._id);
    const user =
      created ?? (pending && !pending.email_verified ? await s.users.replacePending(email, hash) : null);
    // The same answer whether or not the address was taken: sign-up does not reveal who has an account.
    if (user) await s.sendLink(user, 'verify', !created);
    return reply.page((ctx) =>
      inboxPage(
        ctx,
        `We sent a link to ${email}. Open it to confirm your address, then sign in.`,
        s.mailsShownIn,
      ),
    );
  });
}

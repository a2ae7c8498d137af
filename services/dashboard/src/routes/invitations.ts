/**
 * An invitation's link (`/invitation?token=…`, e-mailed by the members page): the page says who is
 * invited to what, and its form joins the workspace. Whoever holds the link proves the mailbox:
 * - signed in with the invited address: one button;
 * - nobody has the address yet: they choose a password, and their account starts confirmed;
 * - the address has an account: they sign in first, then open the link again;
 * - signed in as someone else: they sign out first.
 * Accepting claims the invitation once (two clicks: one wins); joining makes the invited workspace
 * the person's current one.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { field, formSchema } from '../views/forms.ts';
import { hashPassword, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../auth/passwords.ts';
import type { UserDoc } from '../auth/users.ts';
import { invitationPage, type InvitationState } from '../views/members-page.ts';
import { messagePage } from '../views/pages.ts';
import type { InvitationDoc } from '../workspaces/invitations.ts';
import type { DashboardServices } from '../services.ts';

const linkExpired = (reply: FastifyReply) =>
  reply.page(
    (ctx) =>
      messagePage(ctx, 'Link expired', 'This invitation is invalid, used, withdrawn or expired.', 'error'),
    400,
  );

export default async function invitationRoutes(app: FastifyInstance, s: DashboardServices) {
  async function stateFor(user: UserDoc | null, invitation: InvitationDoc): Promise<InvitationState> {
    if (user) return user.email === invitation.email ? 'accept' : 'someone-else';
    return (await s.users.byEmail(invitation.email)) ? 'sign-in' : 'new-person';
  }

  app.get<{ Querystring: { token?: string } }>(
    '/invitation',
    { config: { permission: 'public' } },
    async (request, reply) => {
      const token = request.query.token ?? '';
      const invitation = await s.invitations.peek(token);
      if (!invitation) return linkExpired(reply);
      const state = await stateFor(request.dash.user, invitation);
      return reply.page((ctx) => invitationPage(ctx, invitation, token, state));
    },
  );

  app.post(
    '/invitation',
    { config: { permission: 'public' }, schema: { body: formSchema('token', 'new_password') } },
    async (request, reply) => {
      const token = field(request.body, 'token');
      const invitation = await s.invitations.peek(token);
      if (!invitation) return linkExpired(reply);
      const state = await stateFor(request.dash.user, invitation);
      const again = (text: string, status: number) =>
        reply.page((ctx) => invitationPage(ctx, invitation, token, state, { kind: 'error', text }), status);
      let user: UserDoc | null = request.dash.user;
      if (state === 'sign-in' || state === 'someone-else') return again('See below.', 409);
      if (state === 'new-person') {
        const password = field(request.body, 'new_password');
        if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
          return again(
            `The password needs ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters.`,
            400,
          );
        }
        user = await s.users.create(
          invitation.email,
          await hashPassword(password, s.config.PASSWORD_SCRYPT_N),
          s.now(),
        );
        // Signed up at the same moment through the sign-up form: that account signs in first.
        if (!user)
          return again('This address has just signed up: sign in with it, then open the link again.', 409);
      }
      const person = user!;
      const claimed = await s.invitations.accept(token, person._id);
      if (!claimed) return linkExpired(reply);
      try {
        await request.gateway.putMember(
          claimed.account_id,
          person._id,
          { email: person.email, role: claimed.role },
          person._id,
        );
      } catch (err) {
        // The workspace is full or gone: the invitation stays usable for a later try.
        await s.invitations.release(claimed._id);
        throw err;
      }
      // The link proves the mailbox, as a confirmation link does.
      await s.users.update(person._id, { account_id: claimed.account_id, email_verified: true });
      if (!request.dash.user) await reply.startSession({ ...person, email_verified: true });
      return reply.redirect('/', 303);
    },
  );
}

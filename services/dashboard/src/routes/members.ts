/**
 * The members page and its forms: invite someone (an e-mailed link, invitations.ts), change a
 * member's role, remove a member (their sessions end, the keys they made are revoked unless
 * another member takes them), withdraw an invitation, leave the workspace. The gateway keeps the
 * memberships and enforces that a workspace keeps an owner; this side adds that only an owner
 * makes, changes or removes an owner. Each form answers 303 to GET /members with a notice.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { WORKSPACE_ROLES, isWorkspaceRole, roleMay, type WorkspaceRole } from '@subx/contracts/workspaces';
import { field, formSchema } from '../views/forms.ts';
import { GatewayError } from '../gateway/client.ts';
import { signedInUser } from '../auth/guards.ts';
import { normalizeEmail } from '../auth/users.ts';
import { reportMemberEvent } from '../auth/gateway-audit.ts';
import { membersPage } from '../views/members-page.ts';
import { messagePage } from '../views/pages.ts';
import { currentWorkspaceOf, type CurrentWorkspace } from '../workspaces/workspace-access.ts';
import type { DashboardServices } from '../services.ts';

const MEMBER_ID = /^usr_[0-9a-f]{32}$/;

/** An admin gives every role but owner; an owner every role. */
const grantableBy = (role: WorkspaceRole): WorkspaceRole[] =>
  WORKSPACE_ROLES.filter((r) => r !== 'owner' || role === 'owner');

export default async function memberRoutes(app: FastifyInstance, s: DashboardServices) {
  const confirmFirst = s.guards.confirmed(async (_request, reply) =>
    reply.page((ctx) => messagePage(ctx, 'Members', 'Confirm your email first.', 'error'), 403),
  );
  /** The workspace the role guard checked (every route here declares a workspace permission). */
  const workspaceOf = async (request: FastifyRequest): Promise<CurrentWorkspace> => {
    const workspace = await currentWorkspaceOf(request);
    if (!workspace) throw new Error('member route without a workspace');
    return workspace;
  };
  const back = async (request: FastifyRequest, reply: FastifyReply, kind: 'ok' | 'error', text: string) => {
    await s.flash.put(request.dash.session!.id, { kind, text });
    return reply.redirect('/members', 303);
  };
  /** The gateway's reason for a refused change (the last owner, the member cap), said on the page. */
  const refused = (request: FastifyRequest, reply: FastifyReply, err: unknown) => {
    if (err instanceof GatewayError && err.status === 400 && err.detail) {
      return back(request, reply, 'error', err.detail);
    }
    throw err;
  };
  const notAMember = (reply: FastifyReply) =>
    reply.page((ctx) => messagePage(ctx, 'Not found', 'This person is not a member here.', 'error'), 404);
  const ownersOnly = (reply: FastifyReply) =>
    reply.page(
      (ctx) => messagePage(ctx, 'Owners only', 'Only an owner makes, changes or removes an owner.', 'error'),
      403,
    );

  app.get(
    '/members',
    { config: { permission: 'members:read' }, preHandler: confirmFirst },
    async (request, reply) => {
      const user = signedInUser(request);
      const workspace = await workspaceOf(request);
      const manage = roleMay(workspace.role, 'members:manage');
      const [members, invitations, workspaces] = await Promise.all([
        request.gateway.members(workspace.accountId),
        manage ? s.invitations.pending(workspace.accountId) : null,
        request.gateway.workspacesOf(user._id),
      ]);
      const flash = await s.flash.take(request.dash.session!.id);
      return reply.page((ctx) =>
        membersPage(
          ctx,
          {
            me: user._id,
            myRole: workspace.role,
            members,
            invitations,
            grantable: manage ? grantableBy(workspace.role) : [],
            workspaces: workspaces.map((w) => ({ ...w, current: w.account_id === workspace.accountId })),
          },
          flash ? { kind: flash.kind, text: flash.text } : null,
        ),
      );
    },
  );

  app.post(
    '/members/invite',
    {
      config: { permission: 'members:manage' },
      schema: { body: formSchema('email', 'role') },
      preHandler: confirmFirst,
    },
    async (request, reply) => {
      const user = signedInUser(request);
      const workspace = await workspaceOf(request);
      const email = normalizeEmail(field(request.body, 'email'));
      const role = field(request.body, 'role');
      if (!email) return back(request, reply, 'error', 'That is not an e-mail address.');
      if (!isWorkspaceRole(role)) return back(request, reply, 'error', 'Choose a role.');
      if (!grantableBy(workspace.role).includes(role)) return ownersOnly(reply);
      const members = await request.gateway.members(workspace.accountId);
      if (members.some((m) => m.email === email)) {
        return back(request, reply, 'error', `${email} is a member already: change their role instead.`);
      }
      const made = await s.invitations.create({
        accountId: workspace.accountId,
        email,
        role,
        invitedBy: user._id,
      });
      if (!made)
        return back(request, reply, 'error', 'Too many invitations are waiting: withdraw some first.');
      s.sendLink.invitation(email, made.token, role, user.email);
      await reportMemberEvent(request.gateway, request.log, {
        action: 'member.invited',
        accountId: workspace.accountId,
        memberId: user._id,
        sourceIp: request.ip,
        invitation: { id: made.invitation._id, email, role },
      });
      const where = s.mailsShownIn ? ` (without a mail server, the link is in ${s.mailsShownIn})` : '';
      return back(request, reply, 'ok', `Invitation sent to ${email}${where}.`);
    },
  );

  app.post<{ Params: { id: string } }>(
    '/members/invitations/:id/withdraw',
    { config: { permission: 'members:manage' }, schema: { body: formSchema() }, preHandler: confirmFirst },
    async (request, reply) => {
      const workspace = await workspaceOf(request);
      const withdrawn = await s.invitations.withdraw(workspace.accountId, request.params.id);
      if (!withdrawn) {
        return reply.page(
          (ctx) => messagePage(ctx, 'Not found', 'No such invitation is waiting here.', 'error'),
          404,
        );
      }
      await reportMemberEvent(request.gateway, request.log, {
        action: 'invitation.withdrawn',
        accountId: workspace.accountId,
        memberId: signedInUser(request)._id,
        sourceIp: request.ip,
        invitation: { id: withdrawn._id, email: withdrawn.email, role: withdrawn.role },
      });
      return back(request, reply, 'ok', `The invitation to ${withdrawn.email} is withdrawn.`);
    },
  );

  /** The member named in the path, as the gateway lists them; null when there is none. */
  const memberOf = async (request: FastifyRequest<{ Params: { user_id: string } }>, accountId: string) => {
    const id = request.params.user_id;
    if (!MEMBER_ID.test(id)) return null;
    return (await request.gateway.members(accountId)).find((m) => m.member_id === id) ?? null;
  };

  app.post<{ Params: { user_id: string } }>(
    '/members/:user_id/role',
    {
      config: { permission: 'members:manage' },
      schema: { body: formSchema('role') },
      preHandler: confirmFirst,
    },
    async (request, reply) => {
      const workspace = await workspaceOf(request);
      const member = await memberOf(request, workspace.accountId);
      if (!member) return notAMember(reply);
      const role = field(request.body, 'role');
      if (!isWorkspaceRole(role)) return back(request, reply, 'error', 'Choose a role.');
      if ((member.role === 'owner' || role === 'owner') && workspace.role !== 'owner')
        return ownersOnly(reply);
      try {
        await request.gateway.putMember(
          workspace.accountId,
          member.member_id,
          { email: member.email, role },
          signedInUser(request)._id,
        );
      } catch (err) {
        return refused(request, reply, err);
      }
      return back(request, reply, 'ok', `${member.email} is now ${role}.`);
    },
  );

  /** The removed person's sessions end, and their pages no longer act on this workspace. */
  async function signOutOf(memberId: string, accountId: string) {
    await s.users.endSessions(memberId);
    const person = await s.users.byId(memberId);
    if (person?.account_id === accountId) await s.users.update(memberId, { account_id: null });
  }

  app.post<{ Params: { user_id: string } }>(
    '/members/:user_id/remove',
    {
      config: { permission: 'members:manage' },
      schema: { body: formSchema('confirm', 'reassign_to') },
      preHandler: confirmFirst,
    },
    async (request, reply) => {
      const user = signedInUser(request);
      const workspace = await workspaceOf(request);
      const member = await memberOf(request, workspace.accountId);
      if (!member) return notAMember(reply);
      if (member.member_id === user._id)
        return back(request, reply, 'error', 'To leave, use "Leave this workspace".');
      if (member.role === 'owner' && workspace.role !== 'owner') return ownersOnly(reply);
      if (field(request.body, 'confirm') !== 'yes')
        return back(request, reply, 'error', 'Tick the box to confirm.');
      const heir = field(request.body, 'reassign_to');
      let removed;
      try {
        removed = await request.gateway.removeMember(
          workspace.accountId,
          member.member_id,
          user._id,
          MEMBER_ID.test(heir) ? heir : undefined,
        );
      } catch (err) {
        return refused(request, reply, err);
      }
      await signOutOf(member.member_id, workspace.accountId);
      const keys = removed.revoked_keys.length
        ? ` ${removed.revoked_keys.length} key(s) they made are revoked.`
        : removed.reassigned_keys.length
          ? ` ${removed.reassigned_keys.length} key(s) they made are handed over.`
          : '';
      return back(request, reply, 'ok', `${member.email} is removed and signed out.${keys}`);
    },
  );

  app.post(
    '/members/leave',
    {
      config: { permission: 'workspace:view' },
      schema: { body: formSchema('confirm') },
      preHandler: confirmFirst,
    },
    async (request, reply) => {
      const user = signedInUser(request);
      const workspace = await workspaceOf(request);
      if (field(request.body, 'confirm') !== 'yes')
        return back(request, reply, 'error', 'Tick the box to confirm.');
      try {
        await request.gateway.removeMember(workspace.accountId, user._id, user._id);
      } catch (err) {
        return refused(request, reply, err);
      }
      const other = (await request.gateway.workspacesOf(user._id))[0]?.account_id ?? null;
      await s.users.update(user._id, { account_id: other });
      return reply.redirect('/', 303);
    },
  );
}

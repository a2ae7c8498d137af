/**
 * The workspace's export and its deletion, from the account page (views/workspace-page.ts):
 *
 * - GET /workspace/export streams the gateway's archive (GET /admin/v1/accounts/{id}/export, the
 *   public export's twin) to the person as an attachment, the person named in its audit log;
 * - POST /workspace/delete (behind a ticked box) mails a confirmation link to the signed-in
 *   person, as a password reset does (one-time-links.ts: single use, 30 minutes, only the newest
 *   works, only its hash stored; link-mail.ts: a few mails an hour, the token never logged);
 * - GET /delete-workspace?token= shows the link's page (nothing changes on GET: mail scanners
 *   follow links), and its POST deletes the workspace through the admin API (DELETE
 *   /admin/v1/accounts/{id}), then leaves everyone who belonged to it without a workspace and
 *   deletes its invitations (they hold the invited addresses).
 *
 * The link works only for the person it was sent to, signed in: a stolen session alone cannot
 * delete the workspace, and neither can the mailbox alone. The gateway call comes before the link
 * is used up, so an outage leaves the link for another try (a workspace already gone is a 404,
 * taken as done).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { signedInUser } from '../auth/guards.ts';
import type { AccountDeleted } from '../gateway/client.ts';
import { GatewayError } from '../gateway/client.ts';
import type { DashboardServices } from '../services.ts';
import { field, formSchema } from '../views/forms.ts';
import { inboxPage, messagePage } from '../views/pages.ts';
import { confirmDeletionPage, workspaceDeletedPage } from '../views/workspace-page.ts';
import { noWorkspacePage } from '../views/members-page.ts';

const confirmForm = formSchema('confirm');
const tokenForm = formSchema('token');

/** The permission each route needs under the workspace roles (their guard reads `config.permission`). */
const EXPORT = { permission: 'workspace:export' } as const;
const DELETE = { permission: 'workspace:delete' } as const;

const linkExpired = (reply: FastifyReply) =>
  reply.page(
    (ctx) => messagePage(ctx, 'Link expired', 'This link is invalid, used or expired.', 'error'),
    400,
  );
const noWorkspace = (reply: FastifyReply) => reply.page((ctx) => noWorkspacePage(ctx), 403);

export default async function workspaceDeletionRoutes(app: FastifyInstance, s: DashboardServices) {
  const confirmedOnly = s.guards.confirmed(async (_request, reply) => reply.redirect('/keys', 303));

  app.get('/workspace/export', { config: EXPORT, preHandler: confirmedOnly }, async (request, reply) => {
    const user = signedInUser(request);
    if (!user.account_id) return noWorkspace(reply);
    const { filename, body } = await request.gateway.exportArchive(user.account_id, user._id);
    body.on('error', (err: unknown) =>
      // The headers are out: the download ends without its `end` line, which says it is cut short.
      request.log.error({ err }, 'workspace export cut short'),
    );
    return reply
      .type('application/x-ndjson; charset=utf-8')
      .header('content-disposition', `attachment; filename="${filename}"`)
      .header('cache-control', 'no-store')
      .send(body);
  });

  app.post(
    '/workspace/delete',
    { schema: { body: confirmForm }, config: DELETE, preHandler: confirmedOnly },
    async (request, reply) => {
      const user = signedInUser(request);
      if (!user.account_id) return noWorkspace(reply);
      if (field(request.body, 'confirm') !== 'yes') {
        return reply.page(
          (ctx) =>
            messagePage(ctx, 'Not deleted', 'Tick the box to confirm that you want it deleted.', 'error'),
          400,
        );
      }
      // Leaves in the background; at most a few an hour per address (link-mail.ts).
      await s.sendLink(user, 'delete-workspace');
      return reply.page((ctx) =>
        inboxPage(
          ctx,
          `We sent a link to ${user.email}: open it, signed in, to confirm the deletion. Until then nothing is deleted.`,
          s.mailsShownIn,
        ),
      );
    },
  );

  /** The person the link was sent to, signed in now; null for any other (or a dead link). */
  async function linkOwner(request: FastifyRequest, token: string): Promise<boolean> {
    const userId = await s.links.peek('delete-workspace', token);
    return userId !== null && userId === signedInUser(request)._id;
  }

  app.get('/delete-workspace', { config: DELETE, preHandler: confirmedOnly }, async (request, reply) => {
    const token = String((request.query as Record<string, unknown>).token ?? '');
    if (!(await linkOwner(request, token))) return linkExpired(reply);
    if (!signedInUser(request).account_id) return noWorkspace(reply);
    return reply.page((ctx) => confirmDeletionPage(ctx, token));
  });

  app.post(
    '/delete-workspace',
    { schema: { body: tokenForm }, config: DELETE, preHandler: confirmedOnly },
    async (request, reply) => {
      const token = field(request.body, 'token');
      if (!(await linkOwner(request, token))) return linkExpired(reply);
      const user = signedInUser(request);
      const accountId = user.account_id;
      if (!accountId) return noWorkspace(reply);
      let deleted: AccountDeleted | null = null;
      try {
        deleted = await request.gateway.deleteAccount(accountId, user._id);
      } catch (err) {
        // Gone already: a second click, or the same deletion finished by an operator.
        if (!(err instanceof GatewayError && err.status === 404)) throw err;
      }
      if ((await s.links.redeem('delete-workspace', token)) === null) return linkExpired(reply);
      const members = await s.users.detachAccount(accountId);
      await s.invitations.forgetWorkspace(accountId);
      s.audit('account.workspace_deleted', {
        actor: { email: user.email, user_id: user._id },
        target: { user_id: user._id, account_id: accountId },
        details: { members, api_keys: deleted?.removed.api_keys ?? 0, jobs: deleted?.removed.jobs ?? 0 },
      });
      const detached = await s.users.byId(user._id);
      if (detached) request.dash.user = detached;
      return reply.page((ctx) => workspaceDeletedPage(ctx, deleted));
    },
  );
}

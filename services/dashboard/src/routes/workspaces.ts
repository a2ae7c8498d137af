/**
 * Which workspace the pages act on: switching to another the person belongs to (the membership is
 * checked at the gateway: another workspace's id is 404, as if it did not exist), and starting a
 * workspace of one's own when the person belongs to none (removed, or left the last one).
 */
import type { FastifyInstance } from 'fastify';
import { field, formSchema } from '../views/forms.ts';
import { signedInUser } from '../auth/guards.ts';
import { messagePage } from '../views/pages.ts';
import { currentWorkspaceOf } from '../workspaces/workspace-access.ts';
import { startWorkspace } from '../workspaces/new-workspace.ts';
import type { DashboardServices } from '../services.ts';

/** A new workspace's gateway calls take two deadlines at most; the lock outlives them. */
const NEW_WORKSPACE_LOCK_MS = 30_000;

export default async function workspaceRoutes(app: FastifyInstance, s: DashboardServices) {
  const confirmFirst = s.guards.confirmed(async (_request, reply) =>
    reply.page((ctx) => messagePage(ctx, 'Workspaces', 'Confirm your email first.', 'error'), 403),
  );

  app.post(
    '/workspaces/switch',
    {
      config: { permission: 'signed-in' },
      schema: { body: formSchema('account_id') },
      preHandler: confirmFirst,
    },
    async (request, reply) => {
      const user = signedInUser(request);
      const accountId = field(request.body, 'account_id');
      const memberships = await request.gateway.workspacesOf(user._id);
      if (!memberships.some((m) => m.account_id === accountId)) {
        return reply.page(
          (ctx) => messagePage(ctx, 'Not found', 'You belong to no workspace with this id.', 'error'),
          404,
        );
      }
      await s.users.update(user._id, { account_id: accountId });
      return reply.redirect('/', 303);
    },
  );

  app.post(
    '/workspaces/new',
    { config: { permission: 'signed-in' }, schema: { body: formSchema() }, preHandler: confirmFirst },
    async (request, reply) => {
      const user = signedInUser(request);
      if (await currentWorkspaceOf(request)) return reply.redirect('/', 303);
      // One at a time per person: two at once would each make a workspace and leave one orphaned.
      const lock = `dashboard:new-workspace:${user._id}`;
      if (!(await s.kv.setIfAbsent(lock, '1', { ttlMs: NEW_WORKSPACE_LOCK_MS }))) {
        return reply.redirect('/', 303);
      }
      try {
        const accountId = await startWorkspace(request.gateway, user);
        await s.users.update(user._id, { account_id: accountId });
      } finally {
        await s.kv.delete(lock);
      }
      return reply.redirect('/keys', 303);
    },
  );
}

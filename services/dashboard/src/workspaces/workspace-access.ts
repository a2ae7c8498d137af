/**
 * Roles, enforced on the server for every page and form: each route declares in its config the
 * permission it needs (`config: { permission }`), and this plugin
 * - refuses to register a route that declares none (so a new page cannot forget it), and keeps the
 *   table of routes and permissions (`app.routePermissions`, which the role table test walks);
 * - before the handler, finds the signed-in person's role in their current workspace (the gateway
 *   keeps the memberships) and answers 403 when the role lacks the permission.
 *
 * The current workspace is the person's `account_id`: every page acts on it, and it only ever
 * names a workspace the person belongs to (confirmation made it, an accepted invitation or a switch
 * checked the membership). Anonymous visitors and unconfirmed addresses pass through to the
 * route's own guard, which sends them to sign in or to confirm first.
 */
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { roleMay, type WorkspacePermission, type WorkspaceRole } from '@subx/contracts/workspaces';
import type { UserDoc } from '../auth/users.ts';
import { messagePage } from '../views/pages.ts';
import { noWorkspacePage } from '../views/members-page.ts';

/**
 * `public`: anyone (sign-in, probes, an invitation's page); `signed-in`: any signed-in person,
 * whatever their workspace (sign-out, switching, re-authentication); `operator`: the operator
 * area, which has its own guard; otherwise the workspace permission the route needs.
 */
export type RoutePermission = WorkspacePermission | 'public' | 'signed-in' | 'operator';

export interface CurrentWorkspace {
  accountId: string;
  role: WorkspaceRole;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    permission?: RoutePermission;
  }
  interface FastifyInstance {
    /** Every route with the permission it declared (static files aside). */
    routePermissions: { method: string; url: string; permission: RoutePermission }[];
  }
}

/** Static files are public by nature; their routes are the static plugin's. */
const STATIC_PREFIX = '/static/';

/**
 * The person's role in their current workspace, or null when they have none (not confirmed, no
 * workspace, removed from it). A workspace made before workspaces had members (its first person's
 * account) gets that person as its owner the first time they are seen: the migration in place.
 */
export async function currentWorkspaceOf(request: FastifyRequest): Promise<CurrentWorkspace | null> {
  if (request.dash.workspace !== undefined) return request.dash.workspace;
  const user = request.dash.user;
  const found = user ? await resolveWorkspace(request, user) : null;
  request.dash.workspace = found;
  return found;
}

async function resolveWorkspace(request: FastifyRequest, user: UserDoc): Promise<CurrentWorkspace | null> {
  const accountId = user.account_id;
  if (!user.email_verified || !accountId) return null;
  const memberships = await request.gateway.workspacesOf(user._id);
  const here = memberships.find((m) => m.account_id === accountId);
  if (here) return { accountId, role: here.role };
  // A workspace deleted since answers 404: the error handler (plugins/render.ts) then leaves
  // everyone of it without a workspace and says so.
  const members = await request.gateway.members(accountId);
  if (members.length > 0) return null;
  await request.gateway.putMember(accountId, user._id, { email: user.email, role: 'owner' }, user._id);
  return { accountId, role: 'owner' };
}

export default fp(
  async (app) => {
    const table: { method: string; url: string; permission: RoutePermission }[] = [];
    app.decorate('routePermissions', table);
    app.addHook('onRoute', (route) => {
      if (route.url.startsWith(STATIC_PREFIX)) return;
      const permission = route.config?.permission;
      for (const method of [route.method].flat()) {
        if (permission === undefined) {
          throw new Error(`${method} ${route.url} declares no permission (config: { permission })`);
        }
        table.push({ method, url: route.url, permission });
      }
    });

    app.addHook('preHandler', async (request, reply) => {
      const permission = request.routeOptions.config.permission;
      if (
        permission === undefined ||
        permission === 'public' ||
        permission === 'signed-in' ||
        permission === 'operator'
      )
        return;
      const user = request.dash.user;
      if (!user || !user.email_verified) return;
      const workspace = await currentWorkspaceOf(request);
      if (!workspace) return reply.page((ctx) => noWorkspacePage(ctx), 403);
      if (!roleMay(workspace.role, permission)) {
        return reply.page(
          (ctx) =>
            messagePage(
              ctx,
              'Not for your role',
              `Your role in this workspace (${workspace.role}) does not include this page. An owner or an admin can change it.`,
              'error',
            ),
          403,
        );
      }
    });
  },
  { name: 'workspace-access', dependencies: ['session'] },
);

/**
 * The role table, walked over every route the dashboard has: each route declares a permission
 * (registering one without fails at start), and for every workspace permission and every role the
 * route answers the role refusal exactly when the role lacks it. A route added without a
 * permission, or a role given more or less than the table says, fails here.
 */
import Fastify from 'fastify';
import fp from 'fastify-plugin';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  WORKSPACE_PERMISSIONS,
  WORKSPACE_ROLES,
  roleMay,
  type WorkspaceRole,
} from '@subx/contracts/workspaces';
import { Browserish, signedInDashboard } from '../../test/support.ts';
import { join } from '../../test/workspace-support.ts';
import workspaceAccess, { type RoutePermission } from './workspace-access.ts';

const REFUSAL = 'Not for your role';
const NOT_A_MEMBER = `usr_${'0'.repeat(32)}`;

/** A path for the route's URL: parameters filled with ids nobody has (nothing is changed). */
const pathOf = (url: string) =>
  url
    .replace(':user_id', NOT_A_MEMBER)
    .replace(':key_id', 'key_nobody')
    .replace(':watch_id', 'wch_nobody')
    .replace(':id', 'inv_000000000000000000000000')
    .replace(':email', 'nobody%40example.com');

const isWorkspacePermission = (p: RoutePermission): p is (typeof WORKSPACE_PERMISSIONS)[number] =>
  (WORKSPACE_PERMISSIONS as readonly string[]).includes(p);

describe('every dashboard route against every role', () => {
  let dash: Awaited<ReturnType<typeof signedInDashboard>>;
  const people = new Map<WorkspaceRole, Browserish>();

  beforeAll(async () => {
    dash = await signedInDashboard('table-owner@example.com');
    people.set('owner', dash.b);
    for (const role of WORKSPACE_ROLES.filter((r) => r !== 'owner')) {
      people.set(role, (await join(dash, `${role}@example.com`, role, `198.51.100.${20 + people.size}`)).b);
    }
  });

  it('knows every route, each with a permission', () => {
    const routes = dash.app.routePermissions;
    expect(routes.length).toBeGreaterThan(30);
    const used = new Set(routes.map((r) => r.permission));
    // Every permission of the table guards at least one page (none is dead), and the kinds beside.
    for (const permission of WORKSPACE_PERMISSIONS.filter(
      (p) => p !== 'workspace:export' && p !== 'workspace:delete',
    )) {
      expect(used, permission).toContain(permission);
    }
    for (const kind of ['public', 'signed-in', 'operator'] as const) expect(used).toContain(kind);
  });

  it('refuses exactly the roles the table leaves out', async () => {
    const outcomes: string[] = [];
    for (const route of dash.app.routePermissions) {
      if (!isWorkspacePermission(route.permission)) continue;
      for (const role of WORKSPACE_ROLES) {
        const b = people.get(role)!;
        // A page of the person's own first: its CSRF token for the form (any page carries one).
        await b.get('/members');
        const res =
          route.method === 'GET' ? await b.get(pathOf(route.url)) : await b.post(pathOf(route.url), {});
        const refused = res.statusCode === 403 && res.body.includes(REFUSAL);
        const expected = !roleMay(role, route.permission);
        if (refused !== expected) {
          outcomes.push(`${route.method} ${route.url} (${route.permission}) as ${role}: ${res.statusCode}`);
        }
        expect(res.statusCode, `${route.method} ${route.url} as ${role}`).toBeLessThan(500);
      }
    }
    expect(outcomes).toEqual([]);
    // Nobody lost their place on the way: every form above was sent without a confirmation.
    expect(dash.gateway.memberships.get(dash.accountId)).toHaveLength(WORKSPACE_ROLES.length);
  });

  it('sends anonymous visitors of a workspace page to sign in', async () => {
    const anonymous = new Browserish(dash.app, '198.51.100.40');
    for (const route of dash.app.routePermissions) {
      if (!isWorkspacePermission(route.permission) || route.method !== 'GET') continue;
      const res = await anonymous.get(pathOf(route.url));
      expect([303, 302], route.url).toContain(res.statusCode);
      expect(res.headers.location, route.url).toBe('/sign-in');
    }
  });
});

describe('the permission check itself', () => {
  it('refuses to register a route that declares no permission', async () => {
    const app = Fastify();
    // The plugin needs the session plugin by name; a stand-in with that name is enough here.
    await app.register(fp(async () => {}, { name: 'session' }));
    await app.register(workspaceAccess);
    app.get('/declared', { config: { permission: 'public' } }, async () => 'ok');
    expect(() => app.get('/forgotten', async () => 'no')).toThrow('GET /forgotten declares no permission');
    await app.close();
  });
});

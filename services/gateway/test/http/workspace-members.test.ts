/**
 * Workspace members through the admin API (what the dashboard calls), on the real access module
 * and audit log: members added and their roles changed, a workspace never left without an owner
 * (also when two owners demote each other at once), a removed member's keys revoked on every call
 * at once unless handed over, where a person belongs, and the members in the workspace's export.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildAdminApp } from '../../src/admin/listener.ts';
import { TEST_ADMIN_TOKEN } from '../access/support.ts';
import { accountsGateway, type AccountsHarness } from './accounts-support.ts';
import { VIDEO_URL } from './support.ts';

const auth = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const OWNER = `usr_${'a'.repeat(32)}`;
const SECOND = `usr_${'b'.repeat(32)}`;
const DEV = `usr_${'c'.repeat(32)}`;

let h: AccountsHarness | undefined;
let admin: FastifyInstance | undefined;
afterEach(async () => {
  await admin?.close();
  await h?.stop();
  h = admin = undefined;
});

async function setup() {
  h = await accountsGateway();
  const m = h.replicas.modules[0]!;
  admin = await buildAdminApp({ config: h.gw.config, access: m, publicApp: h.gw.app });
  const owner = await h.newOwner();
  const call = (method: 'GET' | 'PUT' | 'DELETE' | 'POST', url: string, payload?: object) =>
    admin!.inject({ method, url, headers: auth, ...(payload ? { payload } : {}) });
  const put = (who: string, role: string, by = OWNER) =>
    call('PUT', `/admin/v1/accounts/${owner.id}/members/${who}?member_id=${by}`, {
      email: `${who.slice(4, 8)}@example.com`,
      role,
    });
  return { owner, call, put, m };
}

describe('workspace members (admin API)', () => {
  it('adds members, changes roles, lists them owners first, and says where a person belongs', async () => {
    const { owner, call, put } = await setup();
    expect((await call('GET', `/admin/v1/accounts/${owner.id}/members`)).json()).toEqual({ members: [] });
    expect((await put(DEV, 'developer')).statusCode).toBe(200);
    expect((await put(OWNER, 'owner')).statusCode).toBe(200);
    const changed = await put(DEV, 'viewer');
    expect(changed.json()).toMatchObject({ member_id: DEV, role: 'viewer' });
    const list = (await call('GET', `/admin/v1/accounts/${owner.id}/members`)).json() as {
      members: { member_id: string; role: string }[];
    };
    expect(list.members.map((x) => [x.member_id, x.role])).toEqual([
      [OWNER, 'owner'],
      [DEV, 'viewer'],
    ]);
    const where = (await call('GET', `/admin/v1/members/${DEV}/workspaces`)).json() as {
      workspaces: { account_id: string; role: string }[];
    };
    expect(where.workspaces).toEqual([expect.objectContaining({ account_id: owner.id, role: 'viewer' })]);
    expect((await call('GET', `/admin/v1/members/${SECOND}/workspaces`)).json()).toEqual({ workspaces: [] });

    // What is not a workspace, a person id or a role is refused in the documented shape.
    expect((await call('GET', `/admin/v1/accounts/acct_${'0'.repeat(32)}/members`)).statusCode).toBe(404);
    expect((await put('usr_nope', 'viewer')).statusCode).toBe(400);
    expect((await put(DEV, 'superuser')).json()).toMatchObject({ error: { code: 'INVALID_REQUEST' } });

    const audit = await h!.gw.app.inject({
      method: 'GET',
      url: '/api/v1/audit',
      headers: { 'x-api-key': owner.key },
    });
    const events = audit.json() as {
      events: { action: string; actor: { type: string; id: string }; details: object }[];
    };
    const changes = events.events.filter((e) => e.action.startsWith('member.'));
    expect(changes.map((e) => e.action)).toEqual(['member.role_changed', 'member.added', 'member.added']);
    expect(changes[0]).toMatchObject({
      actor: { type: 'member', id: OWNER },
      details: { from: 'developer', to: 'viewer' },
    });
  });

  it('keeps an owner: the last one cannot step down or be removed, even two at once', async () => {
    const { owner, call, put, m } = await setup();
    await put(OWNER, 'owner');
    const demoted = await put(OWNER, 'admin');
    expect(demoted.statusCode).toBe(400);
    expect(demoted.json()).toMatchObject({
      error: { code: 'INVALID_REQUEST', message: expect.stringContaining('at least one owner') },
    });
    expect((await call('DELETE', `/admin/v1/accounts/${owner.id}/members/${OWNER}`)).statusCode).toBe(400);

    // Two owners demoting each other at the same moment: one owner stays, whatever the order.
    await put(SECOND, 'owner');
    await Promise.allSettled([put(OWNER, 'viewer', SECOND), put(SECOND, 'viewer', OWNER)]);
    const members = (await m.members.list(owner.id))!;
    expect(members.filter((x) => x.role === 'owner').length).toBeGreaterThanOrEqual(1);
  });

  it('revokes the keys a removed member made, at once, unless another member takes them', async () => {
    const { owner, call, put } = await setup();
    await put(OWNER, 'owner');
    await put(DEV, 'developer');
    await put(SECOND, 'developer');
    const make = async (by: string, name: string) =>
      (
        await call('POST', `/admin/v1/accounts/${owner.id}/keys?member_id=${by}`, {
          name,
          scopes: ['transcripts:read'],
        })
      ).json() as { id: string; api_key: string };
    const devKey = await make(DEV, 'dev key');
    const secondKey = await make(SECOND, 'second key');
    const extract = (key: string) =>
      h!.gw.app.inject({
        method: 'POST',
        url: '/api/v1/extract',
        headers: { 'x-api-key': key },
        payload: { url: VIDEO_URL },
      });
    expect((await extract(devKey.api_key)).statusCode).toBe(200);

    const removed = await call('DELETE', `/admin/v1/accounts/${owner.id}/members/${DEV}?member_id=${OWNER}`);
    expect(removed.statusCode).toBe(200);
    expect(removed.json()).toMatchObject({
      member: { member_id: DEV },
      revoked_keys: [devKey.id],
      reassigned_keys: [],
    });
    expect((await extract(devKey.api_key)).statusCode).toBe(401);

    const handed = await call(
      'DELETE',
      `/admin/v1/accounts/${owner.id}/members/${SECOND}?member_id=${OWNER}&reassign_to=${OWNER}`,
    );
    expect(handed.json()).toMatchObject({ revoked_keys: [], reassigned_keys: [secondKey.id] });
    expect((await extract(secondKey.api_key)).statusCode).toBe(200);
    expect((await call('DELETE', `/admin/v1/accounts/${owner.id}/members/${SECOND}`)).statusCode).toBe(404);
    // Handing over to someone who is not a member is refused, and nothing changes.
    await put(DEV, 'developer');
    const toStranger = await call(
      'DELETE',
      `/admin/v1/accounts/${owner.id}/members/${DEV}?reassign_to=${SECOND}`,
    );
    expect(toStranger.statusCode).toBe(400);
  });

  it('puts the members in the workspace’s export', async () => {
    const { owner, put } = await setup();
    await put(OWNER, 'owner');
    await put(DEV, 'billing');
    const res = await h!.gw.app.inject({
      method: 'GET',
      url: '/api/v1/account/export',
      headers: { 'x-api-key': owner.key },
    });
    expect(res.statusCode).toBe(200);
    const members = res.body
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; member_id?: string; role?: string })
      .filter((line) => line.type === 'member');
    expect(members.map((x) => [x.member_id, x.role])).toEqual([
      [OWNER, 'owner'],
      [DEV, 'billing'],
    ]);
  });
});

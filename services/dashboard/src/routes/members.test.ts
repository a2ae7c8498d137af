/**
 * Workspaces through the dashboard, on the fake admin API of test/support.ts (which enforces the
 * gateway's member rules): invitations by e-mail link (single use, expiring, withdrawn), joining as
 * a new person or an existing one, roles changed by owners and admins only as far as they may,
 * removal ending the person's sessions and revoking the keys they made, the last owner staying,
 * another workspace out of reach, and today's accounts becoming workspaces of one.
 */
import { describe, expect, it } from 'vitest';
import { Browserish, signedInDashboard } from '../../test/support.ts';
import { INVITATION_TTL_MS } from '../workspaces/invitations.ts';
import { PASSWORD, invitationPath, join, noticeOf, tokenOf, userIdOf } from '../../test/workspace-support.ts';

const roleOf = (body: string) => /<strong id="my-role">([a-z]+)<\/strong>/.exec(body)?.[1];

describe('invitations', () => {
  it('a new person joins by the link with a password of their own, once', async () => {
    const dash = await signedInDashboard('owner@example.com');
    const { b, userId } = await join(dash, 'dev@example.com', 'developer');

    const mine = await b.get('/members');
    expect(mine.statusCode).toBe(200);
    expect(roleOf(mine.body)).toBe('developer');
    expect(dash.gateway.memberships.get(dash.accountId)?.map((m) => [m.email, m.role])).toEqual([
      ['owner@example.com', 'owner'],
      ['dev@example.com', 'developer'],
    ]);
    // The link proved the mailbox: the account starts confirmed, in the workspace it joined.
    const user = await dash.store
      .collection<{ _id: string; email_verified: boolean; account_id: string }>('dashboard_users')
      .findOne({ _id: userId });
    expect(user).toMatchObject({ email_verified: true, account_id: dash.accountId });

    // Single use: the same link again is refused.
    const path = invitationPath(dash, 'dev@example.com');
    const again = await new Browserish(dash.app).get(path);
    expect(again.statusCode).toBe(400);
    expect(again.body).toContain('invalid, used, withdrawn or expired');

    // The audit log has the invitation and the joining, with who did them.
    const actions = dash.gateway.auditEvents.get(dash.accountId)!.map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['member.invited', 'member.added']));
    const invited = dash.gateway.auditEvents.get(dash.accountId)!.find((e) => e.action === 'member.invited')!;
    expect(invited.details).toEqual({ email: 'dev@example.com', role: 'developer' });
    // The token never reaches a log line.
    expect(dash.logs.join('')).not.toContain(tokenOf(path));
  });

  it('expires, and a withdrawn or replaced invitation no longer works', async () => {
    const dash = await signedInDashboard('owner2@example.com');
    await dash.b.get('/members');
    await dash.b.post('/members/invite', { email: 'late@example.com', role: 'viewer' });
    const first = invitationPath(dash, 'late@example.com');
    // A second invitation of the same address withdraws the first.
    await dash.b.get('/members');
    await dash.b.post('/members/invite', { email: 'late@example.com', role: 'billing' });
    const second = invitationPath(dash, 'late@example.com');
    expect(second).not.toBe(first);
    expect((await new Browserish(dash.app).get(first)).statusCode).toBe(400);
    const shown = await new Browserish(dash.app).get(second);
    expect(shown.statusCode).toBe(200);
    expect(shown.body).toContain('<strong>billing</strong>');

    // Withdrawn from the members page: the link is dead at once.
    await dash.b.get('/members');
    await dash.b.post('/members/invite', { email: 'gone@example.com', role: 'viewer' });
    const page = await dash.b.get('/members');
    const id =
      /data-invitation="gone@example.com">[\s\S]*?\/members\/invitations\/(inv_[0-9a-f]+)\/withdraw/.exec(
        page.body,
      )![1]!;
    expect((await dash.b.post(`/members/invitations/${id}/withdraw`, {})).statusCode).toBe(303);
    expect((await new Browserish(dash.app).get(invitationPath(dash, 'gone@example.com'))).statusCode).toBe(
      400,
    );
    dash.clock.advance(INVITATION_TTL_MS + 1);
    const late = new Browserish(dash.app);
    expect((await late.get(second)).statusCode).toBe(400);
    await late.get('/sign-in');
    const accepted = await late.post('/invitation', { token: tokenOf(second), new_password: PASSWORD });
    expect(accepted.statusCode).toBe(400);
    expect(accepted.body).toContain('invalid, used, withdrawn or expired');
    expect(dash.gateway.memberships.get(dash.accountId)).toHaveLength(1);
  });

  it('someone with an account signs in first; someone else signed in is turned away', async () => {
    const dash = await signedInDashboard('team@example.com');
    const other = new Browserish(dash.app, '198.51.100.9');
    await other.signUpVerified(dash.mail, 'known@example.com', PASSWORD);
    const ownWorkspace = (await dash.store
      .collection<{ _id: string; email: string; account_id: string }>('dashboard_users')
      .findOne({ email: 'known@example.com' }))!.account_id;

    await dash.b.get('/members');
    await dash.b.post('/members/invite', { email: 'known@example.com', role: 'admin' });
    const path = invitationPath(dash, 'known@example.com');

    const anonymous = new Browserish(dash.app);
    expect((await anonymous.get(path)).body).toContain('id="sign-in-first"');
    // The page has no form to send: the sign-in page's token, as a browser would hold one.
    await anonymous.get('/sign-in');
    expect(
      (await anonymous.post('/invitation', { token: tokenOf(path), new_password: PASSWORD })).statusCode,
    ).toBe(409);

    const stranger = new Browserish(dash.app, '198.51.100.10');
    await stranger.signUpVerified(dash.mail, 'stranger@example.com', PASSWORD);
    expect((await stranger.get(path)).body).toContain('id="someone-else"');
    expect((await stranger.post('/invitation', { token: tokenOf(path) })).statusCode).toBe(409);

    // Signed in as the invited address: one button, and the invited workspace becomes the current one.
    await other.get(path);
    expect(other.lastHtml).toContain('Join the workspace');
    expect((await other.post('/invitation', { token: tokenOf(path) })).statusCode).toBe(303);
    expect(roleOf((await other.get('/members')).body)).toBe('admin');
    // Their own workspace is one switch away, and back.
    expect(other.lastHtml).toContain(`data-workspace="${ownWorkspace}"`);
    expect((await other.post('/workspaces/switch', { account_id: ownWorkspace })).statusCode).toBe(303);
    expect(roleOf((await other.get('/members')).body)).toBe('owner');
  });
});

describe('roles and removal', () => {
  it('removing a member ends their sessions and revokes the keys they made unless handed over', async () => {
    const dash = await signedInDashboard('boss@example.com');
    const dev = await join(dash, 'dev1@example.com', 'developer');
    const keep = await join(dash, 'dev2@example.com', 'developer', '198.51.100.11');

    for (const [who, name] of [
      [dev.b, 'CI one'],
      [keep.b, 'CI two'],
    ] as const) {
      await who.get('/keys');
      const made = await who.post('/keys/named', { name, 'scope:transcripts:read': 'yes' });
      expect(made.statusCode).toBe(303);
    }
    const keyOf = (name: string) => dash.gateway.namedKeys.get(dash.accountId)!.find((k) => k.name === name)!;

    await dash.b.get('/members');
    const removed = await dash.b.post(`/members/${dev.userId}/remove`, { confirm: 'yes', reassign_to: '' });
    expect(removed.statusCode).toBe(303);
    expect(noticeOf((await dash.b.get('/members')).body)?.[1]).toContain('1 key(s) they made are revoked');
    expect(keyOf('CI one').status).toBe('revoked');
    // Their session is over: the next page asks them to sign in.
    const after = await dev.b.get('/keys');
    expect(after.statusCode).toBe(303);
    expect(after.headers.location).toBe('/sign-in');

    // Handed over: the key keeps working for the member who takes it.
    await dash.b.get('/members');
    await dash.b.post(`/members/${keep.userId}/remove`, {
      confirm: 'yes',
      reassign_to: await userIdOf(dash, 'boss@example.com'),
    });
    expect(keyOf('CI two').status).toBe('active');
    expect(dash.gateway.memberships.get(dash.accountId)!.map((m) => m.email)).toEqual(['boss@example.com']);
  });

  it('keeps one owner; only owners make, change or remove owners', async () => {
    const dash = await signedInDashboard('first@example.com');
    await dash.b.get('/members');
    const leave = await dash.b.post('/members/leave', { confirm: 'yes' });
    expect(leave.statusCode).toBe(303);
    expect(noticeOf((await dash.b.get('/members')).body)?.[1]).toContain('at least one owner');
    const firstId = await userIdOf(dash, 'first@example.com');
    await dash.b.post(`/members/${firstId}/role`, { role: 'viewer' });
    expect(noticeOf((await dash.b.get('/members')).body)?.[1]).toContain('at least one owner');

    const admin = await join(dash, 'admin@example.com', 'admin');
    await admin.b.get('/members');
    expect(
      (await admin.b.post('/members/invite', { email: 'o@example.com', role: 'owner' })).statusCode,
    ).toBe(403);
    expect((await admin.b.post(`/members/${firstId}/role`, { role: 'viewer' })).statusCode).toBe(403);
    expect((await admin.b.post(`/members/${firstId}/remove`, { confirm: 'yes' })).statusCode).toBe(403);

    // An owner makes the admin an owner; then the first owner may leave.
    await dash.b.get('/members');
    await dash.b.post(`/members/${admin.userId}/role`, { role: 'owner' });
    await dash.b.get('/members');
    expect((await dash.b.post('/members/leave', { confirm: 'yes' })).headers.location).toBe('/');
    expect(dash.gateway.memberships.get(dash.accountId)!.map((m) => [m.email, m.role])).toEqual([
      ['admin@example.com', 'owner'],
    ]);
    // Belonging nowhere: the pages offer a workspace of one's own.
    const nowhere = await dash.b.get('/keys');
    expect(nowhere.statusCode).toBe(403);
    expect(nowhere.body).toContain('id="no-workspace"');
    expect((await dash.b.post('/workspaces/new', {})).headers.location).toBe('/keys');
    expect(roleOf((await dash.b.get('/members')).body)).toBe('owner');
    // Its first key is one the person generates and sees: none came with it.
    const fresh = await dash.b.get('/keys');
    expect(fresh.body).toContain('Generate API Key');
    expect(fresh.body).toContain('You have no active API key.');
    expect(fresh.body).not.toContain('id="masked-key"');
  });

  it('a developer makes keys only with the scopes the role may give', async () => {
    const dash = await signedInDashboard('scopes@example.com');
    const dev = await join(dash, 'scoped@example.com', 'developer');
    await dev.b.get('/keys');
    const refused = await dev.b.post('/keys/named', { name: 'hook', 'scope:webhooks:admin': 'yes' });
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('cannot give a key webhooks:admin');
    const allowed = await dev.b.post('/keys/named', { name: 'read', 'scope:transcripts:read': 'yes' });
    expect(allowed.statusCode).toBe(303);
  });

  it('another workspace is out of reach: switching to it is 404', async () => {
    const one = await signedInDashboard('one@example.com');
    const two = await signedInDashboard('two@example.com');
    const visitor = new Browserish(one.app, '198.51.100.12');
    await visitor.signUpVerified(one.mail, 'visitor@example.com', PASSWORD);
    await visitor.get('/members');
    const foreign = await visitor.post('/workspaces/switch', { account_id: one.accountId });
    expect(foreign.statusCode).toBe(404);
    const unknown = await visitor.post('/workspaces/switch', { account_id: two.accountId });
    expect(unknown.statusCode).toBe(404);
    expect(roleOf((await visitor.get('/members')).body)).toBe('owner');
  });
});

describe('today’s accounts', () => {
  it('become workspaces of one: the person whose account it is becomes its owner', async () => {
    const dash = await signedInDashboard('legacy@example.com');
    // An account from before workspaces: no member at all.
    dash.gateway.memberships.set(dash.accountId, []);
    const page = await dash.b.get('/members');
    expect(page.statusCode).toBe(200);
    expect(roleOf(page.body)).toBe('owner');
    expect(dash.gateway.memberships.get(dash.accountId)!.map((m) => [m.email, m.role])).toEqual([
      ['legacy@example.com', 'owner'],
    ]);
  });
});

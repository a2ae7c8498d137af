/**
 * The workspace's deletion from the account page, confirmed from the mailbox: the ticked box mails
 * a link (nothing deleted yet), the link's page asks again, its POST deletes the workspace through
 * the admin API once; the person and everyone else of the workspace are left without one and see
 * that, not an error. The link works once, for its person only, for 30 minutes, and is never
 * logged. The export streams the admin twin's archive as an attachment.
 */
import { describe, expect, it } from 'vitest';
import { signedInDashboard } from '../../test/support.ts';
import { join } from '../../test/workspace-support.ts';
import { USERS_COLLECTION, type UserDoc } from '../auth/users.ts';

const pathOf = (link: string) => {
  const url = new URL(link);
  return { path: `${url.pathname}${url.search}`, token: url.searchParams.get('token')! };
};

async function workspaceOfTwo() {
  const dash = await signedInDashboard('owner@example.com');
  // A second person of the same workspace, an admin: everything but deleting and exporting it.
  const member = (await join(dash, 'member@example.com', 'admin', '192.0.2.41')).b;
  const users = dash.store.collection<UserDoc>(USERS_COLLECTION);
  const owner = (await users.findOne({ email: 'owner@example.com' }))!;
  return { ...dash, member, users, ownerId: owner._id };
}

describe('deleting the workspace', () => {
  it('mails a link, asks again on its page, then deletes it once; everyone of it is left without one', async () => {
    const { app, b, member, mail, gateway, users, accountId, ownerId, logs } = await workspaceOfTwo();
    const page = await b.get('/keys');
    expect(page.body).toContain('Download export');
    expect(page.body).toContain('Delete workspace');

    const asked = await b.post('/workspace/delete', { confirm: 'yes' });
    expect(asked.statusCode).toBe(200);
    expect(asked.body).toContain('owner@example.com');
    expect(gateway.accounts.has(accountId)).toBe(true);
    const link = pathOf(mail.link('owner@example.com', 'delete-workspace'));
    expect(link.path.startsWith('/delete-workspace?token=')).toBe(true);

    // Another person of the same workspace cannot use it: an admin may not delete at all.
    const asAdmin = await member.get(link.path);
    expect(asAdmin.statusCode).toBe(403);
    expect(asAdmin.body).toContain('Not for your role');
    await member.get('/keys');
    expect((await member.post('/workspace/delete', { confirm: 'yes' })).statusCode).toBe(403);
    expect((await member.get('/workspace/export')).statusCode).toBe(403);
    const confirmPage = await b.get(link.path);
    expect(confirmPage.statusCode).toBe(200);
    expect(confirmPage.body).toContain('Delete the workspace now');
    expect(gateway.accounts.has(accountId)).toBe(true);

    const done = await b.post('/delete-workspace', { token: link.token });
    expect(done.statusCode).toBe(200);
    expect(done.body).toContain('Workspace deleted');
    expect(done.body).toContain('You have no workspace');
    expect(gateway.accounts.has(accountId)).toBe(false);
    expect(gateway.deletions).toEqual([{ id: accountId, memberId: ownerId }]);
    expect(await users.countDocuments({ account_id: accountId })).toBe(0);

    // Used up, and the person has no workspace to delete now: the page and the POST refuse, and
    // nothing is deleted twice.
    const again = await b.get(link.path);
    expect(again.statusCode).toBe(403);
    expect(again.body).toContain('not a member of a workspace');
    await b.get('/keys');
    expect((await b.post('/delete-workspace', { token: link.token })).statusCode).toBe(403);
    expect(gateway.deletions).toHaveLength(1);

    for (const who of [b, member]) {
      const keys = await who.get('/keys');
      expect(keys.statusCode).toBe(403);
      expect(keys.body).toContain('not a member of a workspace');
      expect(keys.body).not.toContain('Confirm your email');
    }
    expect(logs.join('')).not.toContain(link.token);
    await app.close();
  });

  it('without the ticked box mails nothing; a link dies after 30 minutes', async () => {
    const { app, b, mail, gateway, accountId, clock } = await workspaceOfTwo();
    await b.get('/keys');
    expect((await b.post('/workspace/delete', {})).statusCode).toBe(400);
    expect(() => mail.link('owner@example.com', 'delete-workspace')).toThrow();
    await b.get('/keys');
    await b.post('/workspace/delete', { confirm: 'yes' });
    const link = pathOf(mail.link('owner@example.com', 'delete-workspace'));
    clock.advance(31 * 60_000);
    expect((await b.get(link.path)).statusCode).toBe(400);
    await b.get('/keys');
    expect((await b.post('/delete-workspace', { token: link.token })).statusCode).toBe(400);
    expect(gateway.accounts.has(accountId)).toBe(true);
    expect(gateway.deletions).toEqual([]);
    await app.close();
  });

  it('a workspace deleted elsewhere shows as no workspace, not as an error', async () => {
    const { app, b, member, gateway, users, store, accountId } = await workspaceOfTwo();
    // An operator's DELETE /admin/v1/accounts/{id}: the dashboard was not asked.
    await b.get('/members');
    expect((await b.post('/members/invite', { email: 'later@example.com', role: 'viewer' })).statusCode).toBe(
      303,
    );
    const invitations = store.collection('workspace_invitations');
    // The member's (accepted) and this one, waiting: both hold an address.
    expect(await invitations.countDocuments({ account_id: accountId })).toBe(2);
    gateway.accounts.delete(accountId);
    gateway.memberships.delete(accountId);
    const keys = await member.get('/keys');
    expect(keys.statusCode).toBe(403);
    expect(keys.body).toContain('not a member of a workspace');
    expect(await users.countDocuments({ account_id: accountId })).toBe(0);
    expect(await invitations.countDocuments({ account_id: accountId })).toBe(0);
    await app.close();
  });
});

describe('downloading the export', () => {
  it("streams the admin twin's archive as an attachment, the person named", async () => {
    const { app, b, gateway, accountId, ownerId } = await workspaceOfTwo();
    const res = await b.get('/workspace/export');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="subx-export-${accountId}-2026-03-15.jsonl"`,
    );
    expect(res.headers['cache-control']).toBe('no-store');
    const lines = res.body
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string });
    expect(lines.map((l) => l.type)).toEqual(['export', 'account', 'end']);
    expect(gateway.exported).toEqual([{ id: accountId, memberId: ownerId }]);
    await app.close();
  });
});

/**
 * The audit log page on the fake admin API (test/support.ts): the owner's account only, newest
 * first, paged by the gateway's cursor, people of the account by e-mail, and what the keys page did
 * recorded there.
 */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../gateway/client.ts';
import { Browserish, buildTestDashboard, signedInDashboard } from '../../test/support.ts';

const actions = (body: string) => [...body.matchAll(/<tr data-action="([^"]+)">/g)].map((m) => m[1]);

describe('audit log page', () => {
  it('lists the account’s events newest first, the person by e-mail, and pages with Older', async () => {
    const { app, b, gateway, accountId } = await signedInDashboard('audit@example.com');
    const page = await b.get('/audit');
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(/<a href="\/audit"\s+aria-current="page">Audit log<\/a>/);
    // The person joining their new workspace as its owner, and the sign-in the dashboard reported,
    // by the person's e-mail.
    expect(actions(page.body)).toEqual(['sign_in.succeeded', 'member.added']);
    expect(page.body).toContain('<td>audit@example.com</td>');

    // A key made and revoked on the keys page, then more events than a page holds.
    await b.get('/keys');
    await b.post('/keys/named', { name: 'CI', 'scope:transcripts:read': 'yes' });
    await b.get('/keys');
    const keyId = gateway.namedKeys.get(accountId)![0]!.id;
    await b.post(`/keys/named/${keyId}/revoke`, { confirm: 'yes' });
    const first = await b.get('/audit');
    expect(actions(first.body)).toEqual(['key.revoked', 'key.created', 'sign_in.succeeded', 'member.added']);
    expect(first.body).toContain(`key <code>${keyId}</code>`);
    expect(first.body).not.toContain('id="older-page"');

    // 30 keys made and revoked by someone the dashboard cannot name: 60 events more.
    for (let i = 0; i < 30; i++) {
      const made = await gateway.client.createKey(
        accountId,
        { name: `k${i}`, scopes: ['ai'] },
        'usr_elsewhere',
      );
      await gateway.client.revokeNamedKey(accountId, made.id, 'usr_elsewhere');
    }
    const newest = await b.get('/audit');
    expect(actions(newest.body)).toHaveLength(50);
    expect(newest.body).toContain('person <code>usr_elsewhere</code>');
    const older = /<a id="older-page" href="([^"]+)">Older<\/a>/.exec(newest.body)![1]!;
    const second = await b.get(older.replace(/&amp;/g, '&'));
    expect(second.statusCode).toBe(200);
    expect(actions(second.body).slice(-4)).toEqual([
      'key.revoked',
      'key.created',
      'sign_in.succeeded',
      'member.added',
    ]);
    expect(actions(second.body)).toHaveLength(14);
    expect(second.body).toContain('<a id="newest-page" href="/audit">Newest</a>');
    expect(second.body).not.toContain('id="older-page"');

    // A cursor the gateway does not take starts over, saying so.
    const edited = await b.get('/audit?cursor=nonsense');
    expect(edited.statusCode).toBe(400);
    expect(edited.body).toContain('That page link is no longer valid');
    expect(actions(edited.body)).toHaveLength(50);
    await app.close();
  });

  it('names by e-mail only the people of this account', async () => {
    const owner = await signedInDashboard('owner-a@example.com');
    const other = new Browserish(owner.app, '203.0.113.9');
    await other.signUpVerified(owner.mail, 'owner-b@example.com', 'another passphrase 0123');
    const b = await owner.store
      .collection<{ _id: string; email: string }>('dashboard_users')
      .findOne({ email: 'owner-b@example.com' });
    await owner.gateway.client.createKey(owner.accountId, { name: 'x', scopes: ['ai'] }, b!._id);
    const page = await owner.b.get('/audit');
    expect(page.body).toContain(`person <code>${b!._id}</code>`);
    expect(page.body).not.toContain('owner-b@example.com');
    await owner.app.close();
  });

  it('is for signed-in people with a confirmed address only', async () => {
    const { app } = await buildTestDashboard();
    const anonymous = await new Browserish(app).get('/audit');
    expect(anonymous.statusCode).toBe(303);
    expect(anonymous.headers.location).toBe('/sign-in');
    await app.close();
  });

  it('says the log cannot be shown when the gateway does not offer it', async () => {
    const { app, b, gateway } = await signedInDashboard('nolog@example.com');
    gateway.client.auditPage = () => Promise.reject(new GatewayError(503, 'SERVICE_UNAVAILABLE'));
    const page = await b.get('/audit');
    expect(page.statusCode).toBe(502);
    expect(page.body).toContain('The audit log cannot be shown right now');
    await app.close();
  });
});

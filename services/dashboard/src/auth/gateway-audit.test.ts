/**
 * The dashboard reports what only it sees to the account's audit log at the gateway: sign-ins,
 * failed sign-ins for an address that has an account (never for an unknown one), password resets;
 * and a gateway that fails or does not answer never holds a sign-in up for long.
 */
import { describe, expect, it } from 'vitest';
import { Browserish, buildTestDashboard } from '../../test/support.ts';
import { AUDIT_REPORT_TIMEOUT_MS } from './gateway-audit.ts';

const PASSWORD = 'a test passphrase 0123';

async function signedUp(email: string, ip: string) {
  const dash = await buildTestDashboard();
  const b = new Browserish(dash.app, ip);
  const signIn = await b.signUpVerified(dash.mail, email, PASSWORD);
  expect(signIn.statusCode).toBe(303);
  const user = await dash.store
    .collection<{ _id: string; email: string; account_id: string | null }>('dashboard_users')
    .findOne({ email });
  return { ...dash, b, user: user!, accountId: user!.account_id! };
}

describe('audit events reported to the gateway', () => {
  it('reports a sign-in as the member’s, and a wrong password for a known address without a member', async () => {
    const { app, gateway, user, accountId } = await signedUp('audited@example.com', '203.0.113.41');
    expect(gateway.auditReports).toEqual([
      {
        id: accountId,
        event: { action: 'sign_in.succeeded', member_id: user._id, source_ip: '203.0.113.41' },
      },
    ]);

    const stranger = new Browserish(app, '198.51.100.77');
    await stranger.get('/sign-in');
    const wrong = await stranger.post('/sign-in', {
      email: 'audited@example.com',
      password: 'not it at all',
    });
    expect(wrong.statusCode).toBe(401);
    await expect
      .poll(() => gateway.auditReports.at(-1))
      .toEqual({
        id: accountId,
        event: { action: 'sign_in.failed', member_id: null, source_ip: '198.51.100.77' },
      });
    // An address without an account: nothing to report, to nobody.
    const reports = gateway.auditReports.length;
    await stranger.post('/sign-in', { email: 'nobody@example.com', password: 'not it at all' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(gateway.auditReports).toHaveLength(reports);
    await app.close();
  });

  it('reports a password reset', async () => {
    const { app, gateway, mail, user, accountId } = await signedUp('reset-audit@example.com', '203.0.113.42');
    const owner = new Browserish(app, '192.0.2.42');
    await owner.get('/forgot');
    await owner.post('/forgot', { email: 'reset-audit@example.com' });
    const link = new URL(mail.link('reset-audit@example.com', 'reset'));
    await owner.get(`${link.pathname}${link.search}`);
    const done = await owner.post('/reset', {
      token: link.searchParams.get('token')!,
      password: 'the new one only the owner knows',
    });
    expect(done.statusCode).toBe(200);
    expect(gateway.auditReports.at(-1)).toEqual({
      id: accountId,
      event: { action: 'password.reset', member_id: user._id, source_ip: '192.0.2.42' },
    });
    await app.close();
  });

  it('signs in whatever the gateway answers: a failure at once, no answer within the bound, both logged', async () => {
    const { app, gateway, logs } = await signedUp('outage@example.com', '203.0.113.43');
    for (const answer of ['fail', 'hang'] as const) {
      gateway.audit.answer = answer;
      const b = new Browserish(app, '203.0.113.44');
      await b.get('/sign-in');
      const started = performance.now();
      const res = await b.post('/sign-in', { email: 'outage@example.com', password: PASSWORD });
      expect(res.statusCode, answer).toBe(303);
      expect(res.headers.location).toBe('/keys');
      expect(performance.now() - started, answer).toBeLessThan(AUDIT_REPORT_TIMEOUT_MS + 1_500);
    }
    const warnings = logs
      .join('')
      .split('\n')
      .filter((line) => line.includes('audit event'));
    expect(warnings.some((l) => l.includes('could not be reported'))).toBe(true);
    expect(warnings.some((l) => l.includes('did not confirm'))).toBe(true);
    expect(warnings.every((l) => l.includes('"action":"sign_in.succeeded"'))).toBe(true);
    await app.close();
  });
});

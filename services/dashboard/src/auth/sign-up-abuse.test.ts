/**
 * Pre-account hijack and sign-up abuse. A new sign-up for a pending address
 * replaces it (password, sessions, links); no key before confirmation; confirming ends every
 * other session; sign-ups are limited per network before scrypt; confirmation mails are capped per
 * address with the same answer.
 */
import { describe, expect, it } from 'vitest';
import { Browserish, buildTestDashboard } from '../../test/support.ts';

const ATTACKER_PASSWORD = 'attacker chose this one';
const OWNER_PASSWORD = 'the owner chose this one';

const pathOf = (link: string) => {
  const url = new URL(link);
  return { path: `${url.pathname}${url.search}`, token: url.searchParams.get('token')! };
};

describe('pre-account hijack', () => {
  it('a sign-up for a pending address changes nothing of it and mails the owner a link to choose their own password', async () => {
    const { app, mail } = await buildTestDashboard({ OPERATOR_EMAILS: 'victim@example.com' });
    const attacker = new Browserish(app, '203.0.113.5');
    await attacker.get('/sign-up');
    await attacker.post('/sign-up', { email: 'victim@example.com', password: ATTACKER_PASSWORD });
    const first = pathOf(mail.link('victim@example.com', 'verify'));
    await attacker.get('/sign-in');
    expect(
      (await attacker.post('/sign-in', { email: 'victim@example.com', password: ATTACKER_PASSWORD }))
        .statusCode,
    ).toBe(303);

    const owner = new Browserish(app, '192.0.2.44');
    await owner.get('/sign-up');
    const again = await owner.post('/sign-up', { email: 'victim@example.com', password: OWNER_PASSWORD });
    expect(again.body).toContain('Check your inbox');
    expect(mail.sent.at(-1)!.subject).toContain('Someone is signing up');
    // No oracle: the attacker's session does not end when the owner signs up.
    expect((await attacker.get('/keys')).statusCode).toBe(200);
    // The attacker signs up again at once: still nothing changes but a fresh link to the address.
    await attacker.get('/sign-up');
    await attacker.post('/sign-up', { email: 'victim@example.com', password: `${ATTACKER_PASSWORD} 2` });
    const newest = pathOf(mail.link('victim@example.com', 'verify'));
    expect(newest.token).not.toBe(first.token);
    expect((await owner.get(first.path)).statusCode).toBe(400);

    // The owner opens the newest link: their password is not the one the address holds, so it
    // confirms nothing; choosing their own confirms the address with it.
    expect((await owner.get(newest.path)).body).toContain('name="new_password"');
    const refused = await owner.post('/verify', { token: newest.token, password: OWNER_PASSWORD });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).not.toContain('Email confirmed');
    const blank = await owner.post('/verify', { token: newest.token });
    expect(blank.statusCode).toBe(400);
    expect(
      (await owner.post('/verify', { token: newest.token, new_password: OWNER_PASSWORD })).body,
    ).toContain('Email confirmed');

    // The attacker's session and password are gone: no sign-in, no operator pages.
    expect((await attacker.get('/keys')).headers.location).toBe('/sign-in');
    expect((await attacker.get('/operators')).statusCode).not.toBe(200);
    for (const password of [ATTACKER_PASSWORD, `${ATTACKER_PASSWORD} 2`]) {
      await attacker.get('/sign-in');
      expect((await attacker.post('/sign-in', { email: 'victim@example.com', password })).statusCode).toBe(
        401,
      );
    }
    await owner.get('/sign-in');
    expect(
      (await owner.post('/sign-in', { email: 'victim@example.com', password: OWNER_PASSWORD })).statusCode,
    ).toBe(303);
    expect((await owner.get('/operators')).statusCode).toBe(200);

    // A confirmed address is not replaced: the same answer, nothing changes, no mail.
    const sent = mail.sent.length;
    const late = new Browserish(app, '203.0.113.6');
    await late.get('/sign-up');
    expect(
      (await late.post('/sign-up', { email: 'victim@example.com', password: ATTACKER_PASSWORD })).body,
    ).toBe(again.body);
    expect(mail.sent.length).toBe(sent);
    await late.get('/sign-in');
    expect(
      (await late.post('/sign-in', { email: 'victim@example.com', password: ATTACKER_PASSWORD })).statusCode,
    ).toBe(401);
    await app.close();
  });

  it('the password the address signed up with confirms it; a pending sign-up with a dead link is replaced', async () => {
    const { app, mail, clock } = await buildTestDashboard();
    const first = new Browserish(app, '203.0.113.15');
    await first.get('/sign-up');
    await first.post('/sign-up', { email: 'late@example.com', password: ATTACKER_PASSWORD });
    await first.get('/sign-in');
    await first.post('/sign-in', { email: 'late@example.com', password: ATTACKER_PASSWORD });
    clock.advance(24 * 3_600_000 + 1); // the link (and its hold on the address) has expired
    const owner = new Browserish(app, '192.0.2.45');
    await owner.get('/sign-up');
    await owner.post('/sign-up', { email: 'late@example.com', password: OWNER_PASSWORD });
    expect(mail.sent.at(-1)!.subject).toContain('Confirm your email');
    expect((await first.get('/keys')).headers.location).toBe('/sign-in');
    const link = pathOf(mail.link('late@example.com', 'verify'));
    await owner.get(link.path);
    expect((await owner.post('/verify', { token: link.token, password: ATTACKER_PASSWORD })).statusCode).toBe(
      400,
    );
    expect((await owner.post('/verify', { token: link.token, password: OWNER_PASSWORD })).body).toContain(
      'Email confirmed',
    );
    await app.close();
  });

  it('two confirmations at once make one gateway account', async () => {
    const { app, mail, gateway } = await buildTestDashboard();
    const b = new Browserish(app);
    await b.get('/sign-up');
    await b.post('/sign-up', { email: 'twice@example.com', password: OWNER_PASSWORD });
    const link = pathOf(mail.link('twice@example.com', 'verify'));
    await b.get(link.path);
    const answers = await Promise.all([
      b.post('/verify', { token: link.token, password: OWNER_PASSWORD }),
      b.post('/verify', { token: link.token, password: OWNER_PASSWORD }),
    ]);
    expect(answers.filter((r) => r.body.includes('Email confirmed'))).toHaveLength(1);
    expect([...gateway.accounts.values()].filter((a) => a.email === 'twice@example.com')).toHaveLength(1);
    await app.close();
  });

  it('issues no API key before confirmation', async () => {
    const { app, gateway } = await buildTestDashboard();
    const b = new Browserish(app);
    await b.get('/sign-up');
    await b.post('/sign-up', { email: 'pending@example.com', password: OWNER_PASSWORD });
    await b.get('/sign-in');
    await b.post('/sign-in', { email: 'pending@example.com', password: OWNER_PASSWORD });
    await b.get('/keys');
    expect((await b.post('/keys/generate', {})).statusCode).toBe(403);
    await b.get('/keys');
    expect((await b.post('/keys/regenerate', { confirm: 'yes' })).statusCode).toBe(403);
    await b.get('/playground');
    expect(
      (await b.post('/playground', { operation: 'extract', url: 'https://youtu.be/dQw4w9WgXcQ' })).statusCode,
    ).toBe(409);
    expect(gateway.accounts.size).toBe(0);
    expect(gateway.keys.size).toBe(0);
    await app.close();
  });

  it('confirming ends every other session of the account, not the confirming one', async () => {
    const { app, mail } = await buildTestDashboard();
    const here = new Browserish(app);
    const elsewhere = new Browserish(app, '203.0.113.70');
    await here.get('/sign-up');
    await here.post('/sign-up', { email: 'two@example.com', password: OWNER_PASSWORD });
    for (const b of [here, elsewhere]) {
      await b.get('/sign-in');
      expect(
        (await b.post('/sign-in', { email: 'two@example.com', password: OWNER_PASSWORD })).statusCode,
      ).toBe(303);
    }
    const link = pathOf(mail.link('two@example.com', 'verify'));
    await here.get(link.path);
    expect((await here.post('/verify', { token: link.token })).body).toContain(
      'You can generate an API key now',
    );
    expect((await here.get('/keys')).statusCode).toBe(200);
    expect((await elsewhere.get('/keys')).headers.location).toBe('/sign-in');
    await app.close();
  });
});

describe('sign-up abuse', () => {
  it('limits sign-ups per network (IPv6 per /64) with 429 and Retry-After, before any account is made', async () => {
    const { app, mail } = await buildTestDashboard();
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      const b = new Browserish(app, `2001:db8:5:5::${i + 1}`);
      await b.get('/sign-up');
      const res = await b.post('/sign-up', { email: `flood${i}@example.com`, password: OWNER_PASSWORD });
      statuses.push(res.statusCode);
      if (i === 10) expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
    expect(statuses.slice(0, 10).every((s) => s === 200)).toBe(true);
    expect(statuses[10]).toBe(429);
    expect(mail.sent.some((m) => m.to === 'flood10@example.com')).toBe(false);
    const other = new Browserish(app, '2001:db8:5:6::1');
    await other.get('/sign-up');
    expect(
      (await other.post('/sign-up', { email: 'fine@example.com', password: OWNER_PASSWORD })).statusCode,
    ).toBe(200);
    await app.close();
  });

  it('sends at most 3 confirmation mails per address per hour, answering the same', async () => {
    const { app, mail, clock } = await buildTestDashboard();
    const bodies = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const b = new Browserish(app, `198.51.100.${100 + i}`);
      await b.get('/sign-up');
      bodies.add(
        (await b.post('/sign-up', { email: 'inbox@example.com', password: `${OWNER_PASSWORD} ${i}` })).body,
      );
      clock.advance(61_000);
    }
    // The resend button counts too.
    const b = new Browserish(app, '198.51.100.200');
    await b.get('/sign-in');
    // Later sign-ups changed nothing: the first password is still the account's.
    await b.post('/sign-in', { email: 'inbox@example.com', password: `${OWNER_PASSWORD} 0` });
    await b.get('/keys');
    await b.post('/verify/resend', {});
    expect(bodies.size).toBe(1);
    expect(mail.sent.filter((m) => m.to === 'inbox@example.com')).toHaveLength(3);
    await app.close();
  });
});

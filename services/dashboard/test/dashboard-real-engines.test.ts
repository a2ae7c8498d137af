/**
 * Two dashboard replicas on real Redis (sessions, throttling, one-time links) and the
 * MongoDB-compatible server (people), each with its own connections, as two processes would have:
 * a session made on one works on the other, a link mailed by one is used up on the other, and a
 * sign-in lock set through one holds on the other.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithEngine } from '@subx/testing/engines';
import { createMongoDocumentStore, createRedisKeyValueStore } from '@subx/ports';
import type { DocumentStore, KeyValueStore } from '@subx/ports';
import { createOneTimeLinks } from '../src/auth/one-time-links.ts';
import { Browserish, buildTestDashboard, fakeGateway } from './support.ts';
import { createUserRepository } from '../src/auth/users.ts';
import type { TestDashboard } from './support.ts';

const PASSWORD = 'replicas share everything';

describeWithEngine('redis', 'dashboard replicas on real Redis', (redisUrl) => {
  describeWithEngine('mongo', 'and the MongoDB-compatible server', (mongoUrl) => {
    const dbName = `dashboard_it_${randomUUID().slice(0, 8)}`;
    const connections: { kv: KeyValueStore; store: DocumentStore }[] = [];
    let a: TestDashboard;
    let b: TestDashboard;

    beforeAll(async () => {
      const gateway = fakeGateway();
      for (let i = 0; i < 2; i++) {
        connections.push({
          kv: createRedisKeyValueStore({ url: redisUrl }),
          store: createMongoDocumentStore({ url: mongoUrl, dbName }),
        });
      }
      a = await buildTestDashboard({}, { ...connections[0]!, gateway });
      b = await buildTestDashboard({}, { ...connections[1]!, gateway });
    });

    afterAll(async () => {
      await a?.app.close();
      await b?.app.close();
      for (const c of connections) await Promise.allSettled([c.kv.close(), c.store.close()]);
    });

    it('shares sessions, links, people and sign-in locks between replicas', async () => {
      const email = `replica-${randomUUID().slice(0, 8)}@example.com`;
      // a network of this run only: sign-ups are counted per network for an hour in the shared
      // Redis, so a fixed address would run into the limit after a few runs on one machine
      const home = `2001:db8:${randomUUID().slice(0, 4)}:${randomUUID().slice(0, 4)}::7`;
      const onA = new Browserish(a.app, home);
      await onA.get('/sign-up');
      await onA.post('/sign-up', { email, password: PASSWORD });
      // The link mailed by A works on B, once.
      const link = new URL(a.mail.link(email, 'verify'));
      const onB = new Browserish(b.app, home);
      await onB.get(`${link.pathname}${link.search}`);
      expect(
        (await onB.post('/verify', { token: link.searchParams.get('token')!, password: PASSWORD }))
          .statusCode,
      ).toBe(200);
      await onA.get('/sign-in');
      expect(
        (await onA.post('/verify', { token: link.searchParams.get('token')!, password: PASSWORD }))
          .statusCode,
      ).toBe(400);
      // Duplicate sign-up is refused by the unique index, silently.
      await onB.get('/sign-up');
      await onB.post('/sign-up', { email, password: 'another password 123' });
      expect(b.mail.sent.filter((m) => m.to === email)).toHaveLength(0);

      // Signed in on A, the session (and its CSRF token) works on B.
      await onA.get('/sign-in');
      expect((await onA.post('/sign-in', { email, password: PASSWORD })).statusCode).toBe(303);
      const moved = new Browserish(b.app, home);
      moved.cookie = onA.cookie;
      expect((await moved.get('/keys')).body).toContain('Generate API Key');
      expect((await moved.post('/keys/generate', {})).statusCode).toBe(303);
      // The one-time key crosses the redirect in the shared store: the next page, on A, shows it once.
      expect((await onA.get('/keys')).body).toContain('Your new API key');
      expect((await moved.get('/keys')).body).not.toContain('Your new API key');

      // Failures through A lock the email on B.
      // networks of this run only: sign-in counters live 24 h in the shared Redis, and IPv6
      // clients are counted per /64
      const address = () => `2001:db8:${randomUUID().slice(0, 4)}:${randomUUID().slice(0, 4)}::1`;
      const attacker = new Browserish(a.app, address());
      for (let i = 0; i < 4; i++) {
        await attacker.get('/sign-in');
        expect((await attacker.post('/sign-in', { email, password: 'not the password' })).statusCode).toBe(
          401,
        );
      }
      const elsewhere = new Browserish(b.app, address());
      await elsewhere.get('/sign-in');
      expect((await elsewhere.post('/sign-in', { email, password: PASSWORD })).statusCode).toBe(429);
    });

    it('keeps a concurrent burst on two replicas to a few checked passwords, and replaces a lapsed sign-up', async () => {
      const email = `burst-${randomUUID().slice(0, 8)}@example.com`;
      const first = new Browserish(a.app, `2001:db8:${randomUUID().slice(0, 4)}::1`);
      await first.get('/sign-up');
      await first.post('/sign-up', { email, password: 'the first password' });
      // Its link has run out (as after 24 h): the address is free for a new sign-up again.
      const pending = await createUserRepository(a.store).byEmail(email);
      await createOneTimeLinks(a.kv).revokeAll('verify', pending!._id);
      const second = new Browserish(b.app, `2001:db8:${randomUUID().slice(0, 4)}::1`);
      await second.get('/sign-up');
      await second.post('/sign-up', { email, password: PASSWORD });
      // The replaced password is gone; the new one works (findOneAndUpdate on the real server).
      await second.get('/sign-in');
      expect((await second.post('/sign-in', { email, password: PASSWORD })).statusCode).toBe(303);

      const attackers = [a, b].map(
        (replica) => new Browserish(replica.app, `2001:db8:${randomUUID().slice(0, 4)}::2`),
      );
      for (const attacker of attackers) await attacker.get('/sign-in');
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          attackers[i % 2]!.post('/sign-in', { email, password: 'the first password' }),
        ),
      );
      expect(answers.filter((r) => r.statusCode === 401).length).toBeLessThanOrEqual(5);
      expect(answers.filter((r) => r.statusCode === 429).length).toBeGreaterThanOrEqual(35);
    });
  });
});

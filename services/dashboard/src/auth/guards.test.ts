import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { loadDashboardConfig } from '../config.ts';
import { createOperatorPolicy } from './operators.ts';
import type { Session } from './sessions.ts';
import type { UserDoc } from './users.ts';
import { createGuards, safeNext } from './guards.ts';

const NOW = 1_000_000_000;
const config = loadDashboardConfig({
  ADMIN_TOKEN: 'guards-test-admin-token-0123',
  OPERATOR_EMAILS: 'op@x.example',
});

const person = (email: string, verified: boolean): UserDoc =>
  ({ _id: `u_${email}`, email, email_verified: verified, operator: false }) as unknown as UserDoc;
const session = (authAt: number) =>
  ({ id: 's', userId: 'u', csrf: 'c', createdAt: 0, epoch: 0, authAt }) as Session;

/** Who is asking, by the x-who header: nobody, a pending or confirmed person, a fresh or stale operator. */
const VISITORS: Record<string, { user: UserDoc | null; session: Session | null }> = {
  anonymous: { user: null, session: null },
  pending: { user: person('p@x.example', false), session: session(NOW) },
  confirmed: { user: person('c@x.example', true), session: session(NOW) },
  operator: { user: person('op@x.example', true), session: session(NOW - 1_000) },
  'stale-operator': {
    user: person('op@x.example', true),
    session: session(NOW - config.OPERATOR_REAUTH_MS - 1),
  },
};

async function guardedApp() {
  const guards = createGuards({
    operators: createOperatorPolicy(config, () => {}),
    config,
    now: () => NOW,
    notAnOperator: async (_request, reply) => reply.code(403).send('Operators only'),
  });
  const app = Fastify();
  app.decorateRequest('dash', null as never);
  app.decorateReply('page', async function (render, status = 200) {
    return this.code(status).send(render({ csrf: '', viewer: null, path: '/' }));
  });
  app.addHook('onRequest', async (request) => {
    request.dash = VISITORS[String(request.headers['x-who'])]!;
  });
  const ok = async () => 'handler ran';
  app.get('/in', { preHandler: guards.signedIn }, ok);
  app.get(
    '/confirmed',
    { preHandler: guards.confirmed(async (_q, reply) => reply.code(403).send('confirm first')) },
    ok,
  );
  app.get('/operators', { preHandler: guards.operator }, ok);
  app.post('/operators/x', { preHandler: guards.operator }, ok);
  return app;
}

describe('route guards', () => {
  it('signedIn sends anonymous visitors to /sign-in', async () => {
    const app = await guardedApp();
    const anonymous = await app.inject({ url: '/in', headers: { 'x-who': 'anonymous' } });
    expect([anonymous.statusCode, anonymous.headers.location]).toEqual([303, '/sign-in']);
    expect((await app.inject({ url: '/in', headers: { 'x-who': 'pending' } })).body).toBe('handler ran');
  });

  it('confirmed answers a pending person with the route’s refusal', async () => {
    const app = await guardedApp();
    const pending = await app.inject({ url: '/confirmed', headers: { 'x-who': 'pending' } });
    expect([pending.statusCode, pending.body]).toEqual([403, 'confirm first']);
    expect((await app.inject({ url: '/confirmed', headers: { 'x-who': 'anonymous' } })).statusCode).toBe(303);
    expect((await app.inject({ url: '/confirmed', headers: { 'x-who': 'confirmed' } })).body).toBe(
      'handler ran',
    );
  });

  it('operator needs the role and a recent password (step-up to /reauth)', async () => {
    const app = await guardedApp();
    const person = await app.inject({ url: '/operators', headers: { 'x-who': 'confirmed' } });
    expect(person.statusCode).toBe(403);
    expect(person.body).toContain('Operators only');
    expect((await app.inject({ url: '/operators?page=2', headers: { 'x-who': 'operator' } })).body).toBe(
      'handler ran',
    );
    const stale = await app.inject({ url: '/operators?page=2', headers: { 'x-who': 'stale-operator' } });
    expect([stale.statusCode, stale.headers.location]).toEqual([303, '/reauth?next=%2Foperators%3Fpage%3D2']);
    const staleAction = await app.inject({
      method: 'POST',
      url: '/operators/x',
      headers: { 'x-who': 'stale-operator' },
    });
    expect(staleAction.headers.location).toBe('/reauth?next=%2Foperators');
    // An unconfirmed person listed in OPERATOR_EMAILS is not an operator.
    expect((await app.inject({ url: '/operators', headers: { 'x-who': 'anonymous' } })).statusCode).toBe(303);
  });

  it('safeNext only lets operator-area paths through', () => {
    expect(safeNext('/operators?page=3')).toBe('/operators?page=3');
    expect(safeNext('https://evil.example/')).toBe('/operators');
    expect(safeNext('//evil.example')).toBe('/operators');
  });
});

import Fastify from 'fastify';
import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import fp from 'fastify-plugin';
import { describe, expect, it } from 'vitest';
import { createAnonymousCsrf } from '../auth/anonymous-csrf.ts';
import { loadDashboardConfig } from '../config.ts';
import { cookiePolicy } from '../auth/cookies.ts';
import type { DashboardServices } from '../services.ts';
import type { Session } from '../auth/sessions.ts';
import csrf from './csrf.ts';

const config = loadDashboardConfig({ ADMIN_TOKEN: 'csrf-test-admin-token-0123456789' });
const SESSION = {
  id: 's',
  userId: 'u',
  csrf: 'session-token-0123456789',
  createdAt: 0,
  epoch: 0,
  authAt: 0,
} as Session;

async function appWithCsrf() {
  const app = Fastify();
  await app.register(fastifyCookie);
  await app.register(fastifyFormbody);
  // A stand-in for plugins/session.ts: the x-signed-in header signs the request in.
  await app.register(
    fp(
      async (instance) => {
        instance.decorateRequest('dash', null as never);
        instance.addHook('onRequest', async (request) => {
          request.dash = request.headers['x-signed-in']
            ? { session: SESSION, user: null }
            : { session: null, user: null };
        });
      },
      { name: 'session' },
    ),
  );
  const services = {
    config,
    cookiesFor: cookiePolicy(config),
    anonymousCsrf: createAnonymousCsrf(config.ADMIN_TOKEN),
  } as unknown as DashboardServices;
  await app.register(csrf, services);
  app.decorateReply('page', async function (_render, status = 200) {
    return this.code(status).send('form expired');
  });
  app.get('/form', async (_request, reply) => reply.csrfToken());
  app.post('/form', async () => 'accepted');
  app.put('/admin/x', async () => 'admin');
  return app;
}

const form = (body: Record<string, string>, headers: Record<string, string> = {}) => ({
  method: 'POST' as const,
  url: '/form',
  headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  payload: new URLSearchParams(body).toString(),
});

describe('CSRF plugin', () => {
  it('anonymous: the signed token of the cookie must come back in the form', async () => {
    const app = await appWithCsrf();
    const page = await app.inject('/form');
    const token = page.body;
    const cookie = String(page.headers['set-cookie']).split(';')[0]!;
    expect(cookie).toBe(`subx_csrf=${token}`);
    expect((await app.inject(form({ _csrf: token }, { cookie }))).body).toBe('accepted');
    expect((await app.inject(form({ _csrf: token }))).statusCode).toBe(403);
    expect((await app.inject(form({ _csrf: 'forged' }, { cookie: 'subx_csrf=forged' }))).statusCode).toBe(
      403,
    );
    expect((await app.inject(form({}, { cookie }))).statusCode).toBe(403);
    expect((await app.inject({ method: 'POST', url: '/form', headers: { cookie } })).statusCode).toBe(403);
  });

  it('signed in: the session’s token, not an anonymous one', async () => {
    const app = await appWithCsrf();
    const signedIn = { 'x-signed-in': '1' };
    expect((await app.inject({ url: '/form', headers: signedIn })).body).toBe(SESSION.csrf);
    expect((await app.inject(form({ _csrf: SESSION.csrf }, signedIn))).body).toBe('accepted');
    const anonymous = await app.inject('/form');
    const cookie = String(anonymous.headers['set-cookie']).split(';')[0]!;
    expect((await app.inject(form({ _csrf: anonymous.body }, { ...signedIn, cookie }))).statusCode).toBe(403);
  });

  it('leaves the bearer-token admin API alone', async () => {
    const app = await appWithCsrf();
    expect((await app.inject({ method: 'PUT', url: '/admin/x' })).body).toBe('admin');
  });
});

/**
 * The admin API and the audit log: what the operator changes is recorded (actor operator), the
 * account's log is read at GET /admin/v1/accounts/{id}/audit, and the dashboard reports its own
 * events (actor member) at POST /admin/v1/accounts/{id}/audit.
 */
import { afterEach, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { silentLogger } from '@subx/ports';
import { loadConfig } from '../config.ts';
import { createAuditLog } from '../audit/audit-log.ts';
import type { Replicas } from '../../test/access/support.ts';
import { TEST_ADMIN_TOKEN, startReplicas } from '../../test/access/support.ts';
import { buildAdminApp } from './listener.ts';

let replicas: Replicas | undefined;
let app: FastifyInstance | undefined;

afterEach(async () => {
  await app?.close();
  await replicas?.stop();
  app = undefined;
  replicas = undefined;
});

const headers = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

async function setup(withAudit = true) {
  replicas = await startReplicas(1);
  const audit = createAuditLog({
    store: replicas.store,
    bus: replicas.bus,
    clock: replicas.clock,
    logger: silentLogger,
  });
  app = await buildAdminApp({
    config: loadConfig({}),
    access: replicas.modules[0]!,
    publicApp: Fastify(),
    ...(withAudit ? { audit } : {}),
  });
  const created = await app.inject({
    method: 'POST',
    url: '/admin/v1/accounts',
    headers,
    payload: { tier: 'pro' },
  });
  expect(created.statusCode).toBe(201);
  return { app, audit, accountId: created.json().account_id as string };
}

describe('admin API: the audit log', () => {
  it('records the account’s first key and the operator’s changes to the account and its key, and lists them newest first', async () => {
    const { app, accountId } = await setup();
    const base = `/admin/v1/accounts/${accountId}`;
    expect(
      (
        await app.inject({
          method: 'PATCH',
          url: base,
          headers,
          payload: { tier: 'business', add_credits: 5 },
        })
      ).statusCode,
    ).toBe(200);
    const issued = await app.inject({ method: 'POST', url: `${base}/api-key`, headers });
    expect(issued.statusCode).toBe(201);
    const apiKey = issued.json().api_key as string;
    expect((await app.inject({ method: 'DELETE', url: `${base}/api-key`, headers })).statusCode).toBe(204);

    const page = await app.inject({ method: 'GET', url: `${base}/audit`, headers });
    expect(page.statusCode).toBe(200);
    const { events, next_cursor } = page.json();
    expect(next_cursor).toBeNull();
    expect(events.map((e: { action: string }) => e.action)).toEqual([
      'key.revoked',
      'key.regenerated',
      'account.updated',
      'key.created',
    ]);
    for (const event of events) {
      expect(event).toMatchObject({ account_id: accountId, actor: { type: 'operator', id: null } });
      expect(event.source_ip).toBe('127.0.0.1');
    }
    expect(events[2].details).toEqual({ fields: ['tier', 'add_credits'], tier: 'business' });
    expect(events[3].details).toEqual({ primary: true });
    // The first key and its replacement are two keys.
    expect(events[3].target.id).not.toBe(events[1].target.id);
    // The key's id is the target, the same for the regeneration and the revocation; never the key.
    expect(events[0].target).toEqual(events[1].target);
    expect(events[0].target.id).toMatch(/^key_/);
    expect(page.body).not.toContain(apiKey);
  });

  it('records what the dashboard reports as the member’s, and refuses anything else', async () => {
    const { app, accountId } = await setup();
    const url = `/admin/v1/accounts/${accountId}/audit`;
    const post = (payload: Record<string, unknown>, path = url) =>
      app.inject({ method: 'POST', url: path, headers, payload });
    expect(
      (await post({ action: 'sign_in.succeeded', member_id: 'usr_1', source_ip: '198.51.100.4' })).statusCode,
    ).toBe(204);
    expect(
      (await post({ action: 'sign_in.failed', member_id: null, source_ip: '2001:db8::1' })).statusCode,
    ).toBe(204);
    expect((await post({ action: 'password.reset', member_id: 'usr_1' })).statusCode).toBe(204);
    for (const payload of [
      { action: 'key.revoked' },
      { action: 'sign_in.succeeded', source_ip: 'not-an-ip' },
      { action: 'sign_in.succeeded', email: 'a@b.c' },
      {},
    ]) {
      const res = await post(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().error.code).toBe('INVALID_REQUEST');
    }
    const unknown = '/admin/v1/accounts/acct_00000000000000000000000000000000/audit';
    expect((await post({ action: 'sign_in.succeeded' }, unknown)).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: unknown, headers })).statusCode).toBe(404);

    const events = (await app.inject({ method: 'GET', url: `${url}?limit=2`, headers })).json();
    expect(
      events.events.map((e: { action: string; actor: unknown; source_ip: unknown }) => [
        e.action,
        e.actor,
        e.source_ip,
      ]),
    ).toEqual([
      ['password.reset', { type: 'member', id: 'usr_1' }, null],
      ['sign_in.failed', { type: 'member', id: null }, '2001:db8::1'],
    ]);
    const rest = (
      await app.inject({ method: 'GET', url: `${url}?limit=2&cursor=${events.next_cursor}`, headers })
    ).json();
    expect(rest.events.map((e: { action: string }) => e.action)).toEqual([
      'sign_in.succeeded',
      'key.created',
    ]);
    expect(rest.next_cursor).toBeNull();
    expect((await app.inject({ method: 'GET', url })).statusCode).toBe(401);
  });

  it('answers 503 without an audit log, and the operator’s changes still succeed', async () => {
    const { app, accountId } = await setup(false);
    const base = `/admin/v1/accounts/${accountId}`;
    expect((await app.inject({ method: 'GET', url: `${base}/audit`, headers })).statusCode).toBe(503);
    expect((await app.inject({ method: 'DELETE', url: `${base}/api-key`, headers })).statusCode).toBe(204);
  });
});

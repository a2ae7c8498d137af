/**
 * GET /api/v1/audit on the test gateway with the real audit log (in-memory store, in-process
 * bus): only the key's own account, paged; and what the public wings record once the job service
 * answered: the webhook secret rotated, a watch created and deleted (nothing when it failed).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { WatchesApi, WebhookSecretsApi } from '@subx/backends';
import { AppError } from '@subx/errors';
import { createInMemoryDocumentStore, createInProcessEventBus, ManualClock, silentLogger } from '@subx/ports';
import { buildTestGateway, KEYS, START } from '../../test/http/support.ts';
import { createAuditLog } from './audit-log.ts';
import type { AuditLogModule } from './audit-log.ts';

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

/** The job service's answers, for the routes (their own logic is tested in services/jobs). */
function fakeJobService(): { watches: WatchesApi; webhookSecrets: WebhookSecretsApi } {
  const watches = new Map<string, string>();
  let next = 0;
  const missing = () => new AppError('NOT_FOUND', 'No watch with this id.');
  return {
    watches: {
      async create(account) {
        next += 1;
        const id = `wat_${String(next).padStart(9, '0')}${'a'.repeat(16)}`;
        watches.set(id, account.id);
        return { watch_id: id, runs: 0 };
      },
      async delete(accountId, watchId) {
        if (watches.get(watchId) !== accountId) throw missing();
        watches.delete(watchId);
        return { watch_id: watchId, deleted: true };
      },
      get: async () => Promise.reject(missing()),
      list: async () => ({ watches: [] }),
      runNow: async () => Promise.reject(missing()),
      resume: async () => Promise.reject(missing()),
      pauseCreatedWith: async () => [],
    },
    webhookSecrets: {
      current: async () => ({ secret: 'whsec_x', created_at: '', previous_secret_expires_at: null }),
      rotate: async () => ({ secret: 'whsec_y', created_at: '', previous_secret_expires_at: null }),
      metadata: async () => ({ exists: true, created_at: '', previous_secret_expires_at: null }),
    },
  };
}

async function setup(): Promise<{ app: FastifyInstance; audit: AuditLogModule }> {
  const audit = createAuditLog({
    store: createInMemoryDocumentStore(),
    bus: createInProcessEventBus(),
    clock: new ManualClock(START),
    logger: silentLogger,
  });
  const gw = await buildTestGateway({ deps: { audit, ...fakeJobService() } });
  apps.push(gw.app);
  return { app: gw.app, audit };
}

const get = (app: FastifyInstance, url: string, key: string | null = KEYS.pro) =>
  app.inject({ method: 'GET', url, headers: key ? { 'x-api-key': key } : {} });

describe('GET /api/v1/audit', () => {
  it('answers only the key’s own account, newest first, in pages', async () => {
    const { app, audit } = await setup();
    for (let n = 0; n < 5; n += 1) {
      for (const accountId of ['acc_pro', 'acc_pro2']) {
        await audit.record({
          accountId,
          action: 'key.created',
          actor: { type: 'operator', id: null },
          target: { type: 'key', id: `key_${accountId}_${n}` },
        });
      }
    }
    expect((await get(app, '/api/v1/audit', null)).statusCode).toBe(401);

    const first = await get(app, '/api/v1/audit?limit=3');
    expect(first.statusCode).toBe(200);
    expect(first.headers['cache-control']).toBe('no-store');
    const body = first.json();
    expect(body.request_id).toBe(first.headers['x-request-id']);
    expect(body.events.map((e: { target: { id: string } }) => e.target.id)).toEqual([
      'key_acc_pro_4',
      'key_acc_pro_3',
      'key_acc_pro_2',
    ]);
    const second = (await get(app, `/api/v1/audit?limit=3&cursor=${body.next_cursor}`)).json();
    expect(second.events.map((e: { target: { id: string } }) => e.target.id)).toEqual([
      'key_acc_pro_1',
      'key_acc_pro_0',
    ]);
    expect(second.next_cursor).toBeNull();
    // Another account's cursor reads nothing of it: the account is the key's, whatever the cursor.
    const other = (await get(app, `/api/v1/audit?cursor=${body.next_cursor}`, KEYS.pro2)).json();
    expect(other.events.every((e: { account_id: string }) => e.account_id === 'acc_pro2')).toBe(true);
    expect(other.events).toHaveLength(2);
  });

  it('refuses a limit outside 1..200 and a cursor it did not write, in the documented shape', async () => {
    const { app } = await setup();
    for (const query of ['limit=0', 'limit=201', 'limit=abc', 'cursor=bm9wZQ', 'other=1']) {
      const res = await get(app, `/api/v1/audit?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().error.code, query).toBe('INVALID_REQUEST');
    }
    expect((await get(app, '/api/v1/audit?limit=200')).json()).toMatchObject({
      events: [],
      next_cursor: null,
    });
  });
});

describe('what the public wings record', () => {
  it('records a secret rotation, a watch created and deleted, after the job service answered', async () => {
    const { app, audit } = await setup();
    const headers = { 'x-api-key': KEYS.pro, 'content-type': 'application/json' };
    const rotated = await app.inject({ method: 'POST', url: '/api/v1/webhooks/secret', headers });
    expect(rotated.statusCode).toBe(201);
    const created = await app.inject({
      method: 'POST',
      url: '/api/v1/watches',
      headers,
      payload: {
        source: { type: 'playlist', url: 'https://www.youtube.com/playlist?list=PLwatched' },
        interval_minutes: 60,
      },
    });
    expect(created.statusCode).toBe(201);
    const watchId = created.json().watch_id as string;
    // Another account's delete fails at the job service: nothing is recorded for it.
    const refused = await app.inject({
      method: 'DELETE',
      url: `/api/v1/watches/${watchId}`,
      headers: { 'x-api-key': KEYS.pro2 },
    });
    expect(refused.statusCode).toBe(404);
    const deleted = await app.inject({
      method: 'DELETE',
      url: `/api/v1/watches/${watchId}`,
      headers: { 'x-api-key': KEYS.pro },
    });
    expect(deleted.statusCode).toBe(200);

    const events = (await audit.list('acc_pro')).events;
    expect(events.map((e) => [e.action, e.target])).toEqual([
      ['watch.deleted', { type: 'watch', id: watchId }],
      ['watch.created', { type: 'watch', id: watchId }],
      ['webhook_secret.rotated', { type: 'webhook_secret', id: 'acc_pro' }],
    ]);
    for (const event of events) {
      expect(event.actor.type).toBe('key');
      expect(event.source_ip).toBe('127.0.0.1');
    }
    expect(events[1]!.details).toEqual({ source_type: 'playlist', interval_minutes: 60 });
    // Nothing secret is kept: the rotated secret appears nowhere in the log.
    expect(JSON.stringify(events)).not.toContain('whsec_');
    expect((await audit.list('acc_pro2')).events).toEqual([]);
  });
});

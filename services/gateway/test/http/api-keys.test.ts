/**
 * Named API keys with scopes, end to end through the gateway's routes on the real access module
 * (in-memory stores): made, listed and revoked through /api/v1/keys; every authenticated operation
 * of the table refuses a key without its scope (403 INSUFFICIENT_SCOPE naming it) and lets a key
 * with only that scope past the scope check; expiry (401), source networks (403
 * SOURCE_NOT_ALLOWED), and the MCP tools, which answer as their routes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { API_KEY_SCOPES, type ApiKeyScope } from '@subx/contracts/access';
import { OPERATION_SPECS } from '../../src/openapi/operations.ts';
import { OPERATION_SCOPES } from '../../src/access/access-control.ts';
import type { Replicas } from '../access/support.ts';
import type { TestGateway } from './support.ts';
import { VIDEO_URL } from './support.ts';
import { accountsGateway } from './accounts-support.ts';
import type { AccountsHarness } from './accounts-support.ts';

let replicas: Replicas;
let gw: TestGateway;
let owner = '';

let h: AccountsHarness;
/** A new account's primary key: each has its own room under the cap on named keys. */
const newOwner = async () => (await h.newOwner()).key;

beforeAll(async () => {
  h = await accountsGateway();
  ({ replicas, gw } = h);
  owner = await newOwner();
});
afterAll(async () => {
  await h?.stop();
});

async function call(
  key: string,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  body?: unknown,
  remoteAddress = '127.0.0.1',
) {
  const response = await gw.app.inject({
    method,
    url,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    remoteAddress,
  });
  return { status: response.statusCode, headers: response.headers, body: response.json() };
}

async function makeKey(body: Record<string, unknown>, by = owner): Promise<string> {
  const made = await call(by, 'POST', '/api/v1/keys', body);
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  return made.body.api_key as string;
}

const onlyScope = (scope: ApiKeyScope, by = owner) => makeKey({ name: `only ${scope}`, scopes: [scope] }, by);
const allBut = (scope: ApiKeyScope, by: string) =>
  makeKey({ name: `all but ${scope}`, scopes: API_KEY_SCOPES.filter((s) => s !== scope) }, by);

/** A concrete URL of the operation's path (any id: the scope is checked before the id is looked up). */
const urlOf = (path: string) => path.replace(/\{(\w+)\}/g, 'x_1');

describe('the operation table', () => {
  it('names a scope for exactly the authenticated operations, the metered ones by their operation', () => {
    for (const spec of OPERATION_SPECS) {
      expect(spec.scope === null, spec.operationId).toBe(spec.auth === null);
      if (spec.auth !== null && spec.auth !== 'account') expect(spec.scope).toBe(OPERATION_SCOPES[spec.auth]);
    }
  });

  it('mounts no /api/v1 route outside it', async () => {
    const table = new Set(OPERATION_SPECS.map((s) => `${s.method} ${s.path.replace(/\{(\w+)\}/g, ':$1')}`));
    // printRoutes draws a tree: each line's depth is where its branch starts, four columns a level.
    const parents: string[] = [];
    const routes: [string, string][] = [];
    for (const line of gw.app.printRoutes({ commonPrefix: false }).split('\n')) {
      const m = /^(.*?)[├└]── (\S+) \(([A-Z, ]+)\)/.exec(line) ?? /^(.*?)[├└]── (\S+)$/.exec(line);
      if (!m) continue;
      const depth = m[1]!.length / 4;
      const path = (parents[depth - 1] ?? '') + m[2]!;
      parents[depth] = path;
      if (m[3] && path.startsWith('/api/v1/')) routes.push([path, m[3]]);
    }
    expect(routes.length).toBeGreaterThan(10);
    for (const [path, methods] of routes) {
      // The health check is the one route outside the table: open, and it reads no account.
      if (path === '/api/v1/health') {
        expect((await gw.app.inject({ method: 'GET', url: path })).statusCode).toBe(200);
        continue;
      }
      for (const method of methods!.split(', ').filter((m) => m !== 'HEAD')) {
        expect(table.has(`${method} ${path}`), `${method} ${path} is not in the operation table`).toBe(true);
      }
    }
  });
});

describe('scopes, for every authenticated operation', () => {
  const scoped = OPERATION_SPECS.filter((s) => s.scope !== null);

  it.each(scoped.map((s) => [s.operationId, s] as const))(
    '%s: 403 INSUFFICIENT_SCOPE without its scope, past the check with only it',
    async (_id, spec) => {
      const by = await newOwner();
      const without = await allBut(spec.scope!, by);
      const refused = await call(without, spec.method, urlOf(spec.path), spec.body ? {} : undefined);
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({ code: 'INSUFFICIENT_SCOPE', required_scope: spec.scope });
      const only = await onlyScope(spec.scope!, by);
      const admitted = await call(only, spec.method, urlOf(spec.path), spec.body ? {} : undefined);
      if (spec.operationId === 'exportAccount') {
        // Past the scope check, then refused as any named key is: the export is the primary key's.
        expect(admitted.body.error).toMatchObject({ code: 'INSUFFICIENT_SCOPE', primary_key_required: true });
        return;
      }
      expect(admitted.body.error?.code).not.toBe('INSUFFICIENT_SCOPE');
      expect(admitted.status).not.toBe(401);
    },
  );
});

describe('/api/v1/keys', () => {
  it('a transcripts:read key extracts, and is refused jobs, the webhook secret and the key list', async () => {
    const key = await makeKey({ name: 'ci reader', scopes: ['transcripts:read'] });
    expect((await call(key, 'POST', '/api/v1/extract', { url: VIDEO_URL })).status).toBe(200);
    for (const [method, url, scope] of [
      ['POST', '/api/v1/jobs', 'jobs'],
      ['GET', '/api/v1/webhooks/secret', 'webhooks:admin'],
      ['GET', '/api/v1/keys', 'keys:admin'],
      ['GET', '/api/v1/account', 'account:read'],
      ['POST', '/api/v1/summarize', 'ai'],
    ] as const) {
      const refused = await call(key, method, url, method === 'POST' ? { url: VIDEO_URL } : undefined);
      expect(refused.status, url).toBe(403);
      expect(refused.body.error.required_scope).toBe(scope);
    }
  });

  it('lists the primary key first, then the named ones, never a key itself', async () => {
    const made = await call(owner, 'POST', '/api/v1/keys', { name: 'listed', scopes: ['ai', 'jobs'] });
    expect(made.headers['cache-control']).toBe('no-store');
    expect(made.body).toMatchObject({
      name: 'listed',
      primary: false,
      scopes: ['ai', 'jobs'],
      status: 'active',
    });
    const listed = await call(owner, 'GET', '/api/v1/keys');
    expect(listed.status).toBe(200);
    const keys = listed.body.keys as Array<Record<string, unknown>>;
    expect(keys[0]).toMatchObject({ primary: true, scopes: [...API_KEY_SCOPES], status: 'active' });
    expect(keys.find((k) => k.id === made.body.id)).toMatchObject({ name: 'listed', last4: made.body.last4 });
    expect(JSON.stringify(listed.body)).not.toContain(made.body.api_key);
    // The owner's calls above were noted as its key's last use.
    expect(keys[0]!.last_used_at).toBe(new Date(replicas.clock.now()).toISOString());
  });

  it('a key makes keys only with scopes it has itself', async () => {
    const keyAdmin = await makeKey({ name: 'key admin', scopes: ['keys:admin', 'transcripts:read'] });
    const escalate = await call(keyAdmin, 'POST', '/api/v1/keys', { name: 'x', scopes: ['jobs'] });
    expect(escalate.status).toBe(403);
    expect(escalate.body.error).toMatchObject({ code: 'INSUFFICIENT_SCOPE', required_scope: 'jobs' });
    await makeKey({ name: 'narrower', scopes: ['transcripts:read'] }, keyAdmin);
  });

  it('refuses what is not a key: unknown scope, no scope, a past expiry, a bad network', async () => {
    for (const body of [
      { name: 'a', scopes: ['everything'] },
      { name: 'a', scopes: [] },
      { name: 'a', scopes: ['ai'], expires_at: '2001-01-01T00:00:00Z' },
      { name: 'a', scopes: ['ai'], allowed_cidrs: ['10.0.0.0/33'] },
      { name: 'a', scopes: ['ai'], allowed_cidrs: ['example.com'] },
      { name: '', scopes: ['ai'] },
    ]) {
      const refused = await call(owner, 'POST', '/api/v1/keys', body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error.code).toBe('INVALID_REQUEST');
    }
  });

  it('an expired key is 401 with reason key_expired', async () => {
    const expiresAt = new Date(replicas.clock.now() + 3_600_000).toISOString();
    const key = await makeKey({ name: 'short', scopes: ['transcripts:read'], expires_at: expiresAt });
    expect((await call(key, 'POST', '/api/v1/extract', { url: VIDEO_URL })).status).toBe(200);
    replicas.clock.advance(3_600_000);
    const expired = await call(key, 'POST', '/api/v1/extract', { url: VIDEO_URL });
    expect(expired.status).toBe(401);
    expect(expired.body.error).toMatchObject({ code: 'UNAUTHORIZED', reason: 'key_expired' });
    const listed = await call(owner, 'GET', '/api/v1/keys');
    expect(listed.body.keys.find((k: { name: string }) => k.name === 'short').status).toBe('expired');
  });

  it('a key limited to networks is 403 SOURCE_NOT_ALLOWED from elsewhere, IPv4-mapped addresses included', async () => {
    const key = await makeKey({
      name: 'office',
      scopes: ['transcripts:read'],
      allowed_cidrs: ['203.0.113.0/24', '2001:db8::/32'],
    });
    const outside = await call(key, 'POST', '/api/v1/extract', { url: VIDEO_URL }, '198.51.100.7');
    expect(outside.status).toBe(403);
    expect(outside.body.error.code).toBe('SOURCE_NOT_ALLOWED');
    for (const inside of ['203.0.113.9', '::ffff:203.0.113.9', '2001:db8::1'])
      expect((await call(key, 'POST', '/api/v1/extract', { url: VIDEO_URL }, inside)).status, inside).toBe(
        200,
      );
  });

  it('a revoked key is 401 at once; revoking again answers the same; the primary key is not revoked here', async () => {
    const made = await call(owner, 'POST', '/api/v1/keys', { name: 'gone', scopes: ['transcripts:read'] });
    const key = made.body.api_key as string;
    expect((await call(key, 'POST', '/api/v1/extract', { url: VIDEO_URL })).status).toBe(200);
    const revoked = await call(owner, 'DELETE', `/api/v1/keys/${made.body.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.status).toBe('revoked');
    expect((await call(key, 'POST', '/api/v1/extract', { url: VIDEO_URL })).status).toBe(401);
    expect((await call(owner, 'DELETE', `/api/v1/keys/${made.body.id}`)).body.status).toBe('revoked');
    expect((await call(owner, 'DELETE', '/api/v1/keys/key_unknown')).status).toBe(404);
    const primary = (await call(owner, 'GET', '/api/v1/keys')).body.keys[0].id as string;
    expect((await call(owner, 'DELETE', `/api/v1/keys/${primary}`)).status).toBe(400);
  });
});

describe('the audit log', () => {
  it('shows the key made, its refusals (once a minute) and its revocation, to a keys:admin key only', async () => {
    const by = await newOwner();
    const made = await call(by, 'POST', '/api/v1/keys', { name: 'audited', scopes: ['transcripts:read'] });
    const key = made.body.api_key as string;
    for (let i = 0; i < 3; i += 1) expect((await call(key, 'GET', '/api/v1/jobs')).status).toBe(403);
    expect((await call(key, 'GET', '/api/v1/audit')).status).toBe(403);
    await call(by, 'DELETE', `/api/v1/keys/${made.body.id}`);
    const page = await call(by, 'GET', '/api/v1/audit');
    expect(page.status).toBe(200);
    const events = (
      page.body.events as { action: string; target: { id: string } | null; actor: { id: string } }[]
    )
      .filter((e) => e.target?.id === made.body.id || e.actor.id === made.body.id)
      .map((e) => e.action);
    // Newest first; the three refused job listings are one event, the refused audit read another.
    expect(events).toEqual(['key.revoked', 'scope.refused', 'scope.refused', 'key.created']);
    expect(JSON.stringify(page.body)).not.toContain(key);
  });
});

describe('MCP', () => {
  it('a tool answers as its route: a transcripts:read key cannot create a job through it', async () => {
    const key = await onlyScope('transcripts:read');
    const base = (await gw.app.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1');
    const client = new Client({ name: 't', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${key}` } },
      }),
    );
    try {
      const refused = await client.callTool({
        name: 'create_job',
        arguments: { source: { type: 'urls', urls: [VIDEO_URL] } },
      });
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toContain('INSUFFICIENT_SCOPE');
      const allowed = await client.callTool({ name: 'get_transcript', arguments: { url: VIDEO_URL } });
      expect(allowed.isError ?? false).toBe(false);
    } finally {
      await client.close();
    }
  });
});

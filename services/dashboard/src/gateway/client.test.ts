import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError, createGatewayClient } from './client.ts';

/** A stand-in for the gateway's admin listener that records the headers of each call. */
const seen: { url: string; method: string; headers: Record<string, unknown>; body: string }[] = [];
const server = createServer(async (req, res) => {
  let body = '';
  for await (const chunk of req) body += String(chunk);
  seen.push({ url: req.url ?? '', method: req.method ?? '', headers: req.headers, body });
  if (req.url?.includes('/refused')) {
    const status = req.url.endsWith('down') ? 503 : 400;
    res
      .writeHead(status, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: { code: 'INVALID_REQUEST', message: 'name: must not be blank.' } }));
    return;
  }
  if (req.url?.endsWith('/keys')) {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"keys":[{"id":"key_1"}]}');
    return;
  }
  if (req.url?.endsWith('/missing')) {
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"code":"NOT_FOUND"}}');
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' }).end('{"account_id":"acct_1"}');
});
let baseUrl = '';
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

describe('gateway client', () => {
  it('sends the request id of the dashboard request on every call, and the admin token', async () => {
    const client = createGatewayClient({ baseUrl, adminToken: 'admin-token', timeoutMs: 2_000 });
    seen.length = 0;
    await client.forRequest('req_0123456789').getAccount('acct_1');
    await client.forRequest('req_abcdefghij').limits('acct_1');
    await client.getAccount('acct_1');
    expect(seen.map((s) => s.headers['x-request-id'])).toEqual([
      'req_0123456789',
      'req_abcdefghij',
      undefined,
    ]);
    expect(seen.every((s) => s.headers.authorization === 'Bearer admin-token')).toBe(true);
  });

  it('turns an error answer into a GatewayError with its code', async () => {
    const client = createGatewayClient({ baseUrl, adminToken: 't', timeoutMs: 2_000 }).forRequest(
      'req_x1234567',
    );
    await expect(client.getAccount('missing')).rejects.toEqual(new GatewayError(404, 'NOT_FOUND'));
  });

  it('reads and rotates the webhook secret and pages the jobs under the account', async () => {
    const client = createGatewayClient({ baseUrl, adminToken: 't', timeoutMs: 2_000 });
    seen.length = 0;
    await client.webhookSecret('acct_1');
    await client.rotateWebhookSecret('acct_1');
    await client.jobs('acct_1', { limit: 20 });
    await client.jobs('acct_1', { limit: 20, cursor: 'c/1+2=' });
    expect(seen.map((s) => s.url)).toEqual([
      '/admin/v1/accounts/acct_1/webhook-secret',
      '/admin/v1/accounts/acct_1/webhook-secret',
      '/admin/v1/accounts/acct_1/jobs?limit=20',
      '/admin/v1/accounts/acct_1/jobs?limit=20&cursor=c%2F1%2B2%3D',
    ]);
    expect(seen.map((s) => s.method)).toEqual(['GET', 'POST', 'GET', 'GET']);
  });

  it('lists the account’s watches and deletes one by its id, escaped into the path', async () => {
    const client = createGatewayClient({ baseUrl, adminToken: 't', timeoutMs: 2_000 });
    seen.length = 0;
    await client.watches('acct_1');
    await client.deleteWatch('acct_1', 'wat_1/../x');
    expect(seen.map((s) => [s.method, s.url])).toEqual([
      ['GET', '/admin/v1/accounts/acct_1/watches'],
      ['DELETE', '/admin/v1/accounts/acct_1/watches/wat_1%2F..%2Fx'],
    ]);
  });

  it('lists, makes and revokes named keys with the member as the actor, and pages the audit log', async () => {
    const client = createGatewayClient({ baseUrl, adminToken: 't', timeoutMs: 2_000 });
    seen.length = 0;
    expect(await client.listKeys('acct_1')).toEqual([{ id: 'key_1' }]);
    await client.createKey('acct_1', { name: 'CI', scopes: ['transcripts:read'] }, 'usr 1&x');
    await client.revokeNamedKey('acct_1', 'key_1/../x', 'usr_1');
    await client.auditPage('acct_1', { limit: 50 });
    await client.auditPage('acct_1', { limit: 50, cursor: 'c/1+2=' });
    expect(seen.map((s) => [s.method, s.url])).toEqual([
      ['GET', '/admin/v1/accounts/acct_1/keys'],
      ['POST', '/admin/v1/accounts/acct_1/keys?member_id=usr+1%26x'],
      ['DELETE', '/admin/v1/accounts/acct_1/keys/key_1%2F..%2Fx?member_id=usr_1'],
      ['GET', '/admin/v1/accounts/acct_1/audit?limit=50'],
      ['GET', '/admin/v1/accounts/acct_1/audit?limit=50&cursor=c%2F1%2B2%3D'],
    ]);
    expect(JSON.parse(seen[1]!.body)).toEqual({ name: 'CI', scopes: ['transcripts:read'] });
  });

  it('reads the data retention and changes it with the member as the actor', async () => {
    const client = createGatewayClient({ baseUrl, adminToken: 't', timeoutMs: 2_000 });
    seen.length = 0;
    await client.retention('acct_1');
    await client.updateRetention('acct_1', { job_results_days: 3, chunks_days: null }, 'usr_1');
    expect(seen.map((s) => [s.method, s.url])).toEqual([
      ['GET', '/admin/v1/accounts/acct_1/retention'],
      ['PATCH', '/admin/v1/accounts/acct_1/retention?member_id=usr_1'],
    ]);
    expect(JSON.parse(seen[1]!.body)).toEqual({ job_results_days: 3, chunks_days: null });
  });

  it('keeps the gateway’s message of a refused request, never of a failure', async () => {
    const client = createGatewayClient({ baseUrl, adminToken: 't', timeoutMs: 2_000 });
    const refused = await client.getAccount('refused/x').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(GatewayError);
    expect(refused).toMatchObject({
      status: 400,
      code: 'INVALID_REQUEST',
      detail: 'name: must not be blank.',
    });
    const down = await client.getAccount('refused/down').catch((e: unknown) => e);
    expect(down).toMatchObject({ status: 503, code: 'INVALID_REQUEST', detail: null });
  });
});

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError, createGatewayClient } from './client.ts';

/** A stand-in for the gateway's admin listener that records the headers of each call. */
const seen: { url: string; method: string; headers: Record<string, unknown> }[] = [];
const server = createServer((req, res) => {
  seen.push({ url: req.url ?? '', method: req.method ?? '', headers: req.headers });
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
});

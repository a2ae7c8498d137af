import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { deliverWebhook } from './deliver.ts';
import { generateSigningSecret } from './secret.ts';
import { signWebhook } from './sign.ts';
import { resolveWebhookTarget } from './target-policy.ts';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((s) => {
      s.closeAllConnections();
      return new Promise((resolve) => s.close(resolve));
    }),
  );
});

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
}

async function receiver(
  answer: (req: Received, res: ServerResponse) => void,
): Promise<{ port: number; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { headers: req.headers, body: Buffer.concat(chunks).toString() };
      received.push(r);
      answer(r, res);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, received };
}

const local = (port: number, path = '/hook') =>
  resolveWebhookTarget(`http://127.0.0.1:${port}${path}`, { allowPrivateNetworks: true });

const payload = JSON.stringify({
  type: 'job.completed',
  timestamp: '2026-11-25T10:00:00Z',
  data: { job_id: 'job_1' },
});

describe('deliverWebhook', () => {
  it('posts the signed body; the receiver verifies it with the Standard Webhooks library', async () => {
    const secret = generateSigningSecret();
    let verified: unknown;
    const { port, received } = await receiver((r, res) => {
      verified = new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
      res.writeHead(204).end();
    });
    const attempt = await deliverWebhook({
      target: await local(port),
      headers: signWebhook({ body: payload, secrets: [secret] }),
      body: payload,
    });
    expect(attempt).toMatchObject({ outcome: 'delivered', status: 204 });
    expect(verified).toEqual(JSON.parse(payload));
    expect(received[0]!.headers['content-type']).toBe('application/json');
    expect(received[0]!.headers['user-agent']).toBe('subx-webhooks/1');
  });

  it('connects to the checked address whatever the name would resolve to now', async () => {
    const { port, received } = await receiver((_r, res) => res.writeHead(200).end('ok'));
    const target = {
      url: new URL(`http://hooks.subx.invalid:${port}/hook`),
      address: '127.0.0.1',
      family: 4 as const,
    };
    const attempt = await deliverWebhook({
      target,
      headers: signWebhook({ body: payload, secrets: [generateSigningSecret()] }),
      body: payload,
    });
    expect(attempt).toMatchObject({ outcome: 'delivered', status: 200, detail: 'ok' });
    expect(received[0]!.headers.host).toBe(`hooks.subx.invalid:${port}`);
  });

  it('a 5xx is a failed attempt, with the start of the answer kept and capped', async () => {
    const { port } = await receiver((_r, res) => res.writeHead(503).end('x'.repeat(10_000)));
    const attempt = await deliverWebhook({
      target: await local(port),
      headers: signWebhook({ body: payload, secrets: [generateSigningSecret()] }),
      body: payload,
      maxResponseBytes: 100,
    });
    expect(attempt).toMatchObject({ outcome: 'http_error', status: 503 });
    expect(attempt.detail).toHaveLength(100);
  });

  it('stops reading an endless answer once the excerpt is full', async () => {
    const { port } = await receiver((_r, res) => {
      res.writeHead(200);
      const chunk = Buffer.alloc(64 * 1024, 'y');
      const pump = () => {
        while (res.write(chunk)) if (res.destroyed) return;
        res.once('drain', pump);
      };
      res.on('error', () => undefined);
      pump();
    });
    const attempt = await deliverWebhook({
      target: await local(port),
      headers: signWebhook({ body: payload, secrets: [generateSigningSecret()] }),
      body: payload,
      timeoutMs: 5_000,
    });
    expect(attempt).toMatchObject({ outcome: 'delivered', status: 200 });
    expect(attempt.detail).toHaveLength(512);
  });

  it('never follows a redirect: the place it points to gets nothing', async () => {
    const elsewhere = await receiver((_r, res) => res.writeHead(200).end());
    const { port } = await receiver((_r, res) =>
      res.writeHead(307, { location: `http://127.0.0.1:${elsewhere.port}/stolen` }).end(),
    );
    const attempt = await deliverWebhook({
      target: await local(port),
      headers: signWebhook({ body: payload, secrets: [generateSigningSecret()] }),
      body: payload,
    });
    expect(attempt.outcome).toBe('redirect');
    expect(attempt.status).toBe(307);
    expect(attempt.detail).toContain('not followed');
    expect(elsewhere.received).toHaveLength(0);
  });

  it('a receiver that never answers ends as a timeout within the bound', async () => {
    const { port } = await receiver(() => undefined);
    const t0 = performance.now();
    const attempt = await deliverWebhook({
      target: await local(port),
      headers: signWebhook({ body: payload, secrets: [generateSigningSecret()] }),
      body: payload,
      timeoutMs: 300,
    });
    expect(attempt).toMatchObject({ outcome: 'timeout', status: null });
    expect(performance.now() - t0).toBeLessThan(3_000);
  });

  it('a closed port is a network error, not an exception', async () => {
    const { port } = await receiver(() => undefined);
    await new Promise((resolve) => servers.pop()!.close(resolve));
    const attempt = await deliverWebhook({
      target: await local(port),
      headers: signWebhook({ body: payload, secrets: [generateSigningSecret()] }),
      body: payload,
    });
    expect(attempt).toMatchObject({ outcome: 'network_error', status: null });
    expect(attempt.detail).toMatch(/ECONNREFUSED/);
  });
});

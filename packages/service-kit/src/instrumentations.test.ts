import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { REDACTED_PATH, redactOutgoingUrl } from './instrumentations.ts';

describe('outgoing request spans', () => {
  it('keep the origin and never the path or query of the URL (a webhook secret in its path)', async () => {
    const server = createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const attributes = new Map<string, string>();
    await new Promise<void>((resolve, reject) => {
      const req = request(`http://127.0.0.1:${port}/hooks/s3cr3t-token?sig=abc`, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      redactOutgoingUrl({ setAttribute: (k: string, v: string) => attributes.set(k, v) }, req);
      req.end();
    });
    server.close();
    expect(attributes.get('url.full')).toBe(`http://127.0.0.1:${port}${REDACTED_PATH}`);
    expect(attributes.get('http.target')).toBe(REDACTED_PATH);
    expect([...attributes.values()].join(' ')).not.toMatch(/s3cr3t|sig=/);
  });

  it('leave incoming requests alone', () => {
    const attributes = new Map<string, string>();
    redactOutgoingUrl({ setAttribute: (k: string, v: string) => attributes.set(k, v) }, {
      url: '/x',
    } as never);
    expect(attributes.size).toBe(0);
  });
});

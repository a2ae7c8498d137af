import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import securityHeaders, { CONTENT_SECURITY_POLICY } from './security-headers.ts';

async function appWithHeaders() {
  const app = Fastify();
  await app.register(securityHeaders);
  app.get('/page', async () => 'ok');
  app.get('/static/app.js', async () => '');
  app.get('/boom', async () => {
    throw new Error('boom');
  });
  return app;
}

describe('security headers', () => {
  it('sends the strict CSP and the anti-framing, no-referrer and no-sniff headers on pages', async () => {
    const app = await appWithHeaders();
    const res = await app.inject('/page');
    expect(res.headers['content-security-policy']).toBe(
      "default-src 'none';script-src 'self';style-src 'self';img-src 'self';connect-src 'self';" +
        "form-action 'self';frame-ancestors 'none';base-uri 'none'",
    );
    expect(res.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    expect(res.headers).toMatchObject({
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
      'cross-origin-opener-policy': 'same-origin',
      'permissions-policy': 'camera=(), microphone=(), geolocation=()',
      'cache-control': 'no-store',
    });
    expect(res.headers['strict-transport-security']).toBeUndefined();
  });

  it('sends them on errors and 404s too; static files may be cached', async () => {
    const app = await appWithHeaders();
    for (const path of ['/boom', '/nowhere']) {
      const res = await app.inject(path);
      expect(res.headers['content-security-policy'], path).toBe(CONTENT_SECURITY_POLICY);
      expect(res.headers['cache-control'], path).toBe('no-store');
    }
    const file = await app.inject('/static/app.js');
    expect(file.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    expect(file.headers['cache-control']).toBeUndefined();
  });
});

/**
 * Security headers of every response (pages, redirects, errors, static files) through
 * `@fastify/helmet`: a Content-Security-Policy with no inline script or style anywhere (the charts
 * use SVG presentation attributes), no framing, no Referer (reset and verification pages carry
 * tokens in their URL), and `Cache-Control: no-store` on everything but static files.
 * HSTS is left to the TLS-terminating ingress, which knows the host names it serves.
 */
import fastifyHelmet from '@fastify/helmet';
import fp from 'fastify-plugin';

/** Each directive as helmet takes it; the header is these joined as helmet joins them. */
const CSP_DIRECTIVES: Readonly<Record<string, readonly string[]>> = {
  'default-src': ["'none'"],
  'script-src': ["'self'"],
  'style-src': ["'self'"],
  'img-src': ["'self'"],
  'connect-src': ["'self'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
  'base-uri': ["'none'"],
};

export const CONTENT_SECURITY_POLICY = Object.entries(CSP_DIRECTIVES)
  .map(([name, values]) => `${name} ${values.join(' ')}`)
  .join(';');

export default fp(
  async (app) => {
    await app.register(fastifyHelmet, {
      contentSecurityPolicy: {
        // Only these directives: helmet's defaults would add (weaker) ones of their own.
        useDefaults: false,
        directives: Object.fromEntries(Object.entries(CSP_DIRECTIVES).map(([k, v]) => [k, [...v]])),
      },
      xFrameOptions: { action: 'deny' },
      referrerPolicy: { policy: 'no-referrer' },
      crossOriginOpenerPolicy: { policy: 'same-origin' },
      strictTransportSecurity: false,
    });
    app.addHook('onRequest', async (request, reply) => {
      void reply.header('permissions-policy', 'camera=(), microphone=(), geolocation=()');
      if (!request.url.startsWith('/static/')) void reply.header('cache-control', 'no-store');
    });
  },
  { name: 'security-headers' },
);

/**
 * /openapi.json, the API reference at /docs and the error reference at /docs/errors.
 *
 * /docs is Scalar's API reference (`@scalar/fastify-api-reference`, a maintained OpenAPI 3.1
 * renderer) rather than hand-written HTML. The plugin serves its browser bundle from the npm
 * package at /docs/js/scalar.js, so the page works offline; the configuration below turns off
 * everything that would reach Scalar's servers (web fonts, telemetry, the AI agent, MCP, the
 * request client and its proxy). The browser test (test/http/docs-browser.test.ts) proves that no
 * request leaves the gateway's origin.
 */
import { createHash } from 'node:crypto';
import scalarApiReference from '@scalar/fastify-api-reference';
import type { ApiReferenceConfiguration } from '@scalar/fastify-api-reference';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { renderErrorReference } from './html.ts';
import type { OpenApiDocument } from './openapi.ts';

/** The placeholder the reference's request examples show for the key (README uses the same). */
export const API_KEY_PLACEHOLDER = '<API_KEY>';

const SCALAR_CONFIGURATION: Partial<ApiReferenceConfiguration> = {
  url: '/openapi.json',
  pageTitle: 'Subtitle Extraction API reference',
  // No icon: without one the browser asks for /favicon.ico, which this API does not serve.
  favicon: 'data:,',
  // Offline: the default fonts come from fonts.scalar.com; telemetry, the AI agent and MCP talk to
  // Scalar's services; the request client would offer Scalar's proxy. System fonts instead.
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  hideClientButton: true,
  hideTestRequestButton: true,
  showDeveloperTools: 'never',
  documentDownloadType: 'json',
  // Every operation and every response (each error status is one) open, not behind a click.
  defaultOpenAllTags: true,
  expandAllResponses: true,
  defaultHttpClient: { targetKey: 'shell', clientKey: 'curl' },
  // Scalar masks credentials in its request samples; ours is a placeholder, so show it.
  customCss:
    '.scalar-app .credential .credential-value{color:inherit;font-size:inherit}.scalar-app .credential:after{content:none}',
  authentication: {
    preferredSecurityScheme: 'ApiKey',
    securitySchemes: { ApiKey: { value: API_KEY_PLACEHOLDER } },
  },
};

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/** CSP hashes of a page's inline `<script>` (no `src`) or `<style>` elements. */
function inlineHashes(html: string, tag: 'script' | 'style'): string[] {
  const pattern = new RegExp(`<${tag}(\\s[^>]*)?>([\\s\\S]*?)</${tag}>`, 'gi');
  return [...html.matchAll(pattern)]
    .filter((m) => !/\ssrc=/i.test(m[1] ?? ''))
    .map((m) => sha256(m[2] ?? ''));
}

const COMMON_CSP = [
  "default-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "object-src 'none'",
];

/**
 * The reference page's policy. Scripts: the bundle from this origin and the plugin's one inline
 * initialisation script, allowed by its hash (Scalar's page has no way to move it to a file).
 * Styles: Scalar injects `<style>` elements at runtime, which only `'unsafe-inline'` (or a
 * per-request nonce the plugin cannot carry) admits; styles cannot run code. Fetches: this origin
 * only (the OpenAPI document).
 */
function referenceCsp(html: string): string {
  return [
    ...COMMON_CSP,
    `script-src 'self' ${inlineHashes(html, 'script').join(' ')}`.trim(),
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
  ].join('; ');
}

/** The error reference: no script at all, its one inline stylesheet by hash, the empty `data:` icon. */
function errorsCsp(html: string): string {
  return [...COMMON_CSP, `style-src ${inlineHashes(html, 'style').join(' ')}`, 'img-src data:'].join('; ');
}

function securityHeaders(reply: FastifyReply, csp: string): void {
  reply
    .header('content-security-policy', csp)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer');
}

export async function registerDocs(app: FastifyInstance, openapi: OpenApiDocument): Promise<void> {
  const json = JSON.stringify(openapi);
  const errors = renderErrorReference();
  const errorsPolicy = errorsCsp(errors);
  app.get('/openapi.json', async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send(json),
  );
  app.get('/docs/errors', async (_request, reply) => {
    securityHeaders(reply, errorsPolicy);
    return reply.type('text/html; charset=utf-8').send(errors);
  });
  // Its own scope, so that the hook below sees only the plugin's routes (/docs, /docs/js/scalar.js).
  await app.register(async (scope) => {
    scope.addHook('onSend', async (_request, reply, payload) => {
      const type = String(reply.getHeader('content-type') ?? '');
      if (type.startsWith('text/html') && typeof payload === 'string') {
        securityHeaders(reply, referenceCsp(payload));
      } else if (type.startsWith('application/javascript')) {
        reply.header('x-content-type-options', 'nosniff');
      }
      return payload;
    });
    await scope.register(scalarApiReference, {
      routePrefix: '/docs',
      configuration: SCALAR_CONFIGURATION,
    });
  });
}

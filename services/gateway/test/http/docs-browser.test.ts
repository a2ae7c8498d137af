/**
 * The API reference in a real browser (Debian's Chromium through playwright-core): the gateway on
 * a loopback socket, /docs rendered by Scalar from the live /openapi.json, and /docs/errors. Every
 * operation of the document must render with its complete error list, its documented headers and
 * the nested fields of its response; every request the pages make must stay on 127.0.0.1; the
 * browser console must stay free of errors (a CSP violation is one). Screenshots of both pages go
 * to test-artifacts/ (gitignored).
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ERROR_CODES, docsUrl } from '@subx/errors';
import { describeWithBrowser, launchChromium } from '@subx/testing/browser';
import { API_KEY_PLACEHOLDER } from '../../src/openapi/docs.routes.ts';
import { inlined } from './openapi-support.ts';
import { buildTestGateway } from './support.ts';
import type { TestGateway } from './support.ts';

type Browser = Awaited<ReturnType<typeof launchChromium>>;
type Page = Awaited<ReturnType<Browser['newPage']>>;
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ARTIFACTS = fileURLToPath(new URL('../../../../test-artifacts/', import.meta.url));
/** Generous: two shared cores, and Scalar renders a 5 MB bundle. */
const WAIT_MS = 30_000;

/** The list item (a response, a schema property) an element with a Scalar id belongs to. */
const INNERMOST_LI = 'xpath=ancestor::li[1]';

/** Every request a page makes, and every console error or uncaught exception it reports. */
interface Watched {
  page: Page;
  requests: string[];
  offLoopback: string[];
  errors: string[];
}

async function watchedPage(browser: Browser): Promise<Watched> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const watched: Watched = { page, requests: [], offLoopback: [], errors: [] };
  // `data:` URLs are not network requests; everything else must go to 127.0.0.1.
  const loopback = (href: string) => {
    const url = new URL(href);
    return url.protocol === 'data:' || url.hostname === '127.0.0.1';
  };
  page.on('request', (request) => {
    watched.requests.push(request.url());
    if (!loopback(request.url())) watched.offLoopback.push(request.url());
  });
  // ...and what is not never leaves the machine (the test fails on it above, offline or not).
  await page.route('**', (route) =>
    loopback(route.request().url()) ? route.continue() : route.abort('blockedbyclient'),
  );
  page.on('console', (message) => {
    if (message.type() === 'error') watched.errors.push(`${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => watched.errors.push(`uncaught: ${error.message}`));
  return watched;
}

/** The names of the headers a response documents. */
const headerNames = (response: Json) => Object.keys((response.headers ?? {}) as Json);

/** Top-level properties of a 200 JSON schema that have properties of their own (objects, arrays of objects). */
function nestedProperties(schema: Json | undefined): [string, string[]][] {
  const properties = (schema?.properties ?? {}) as Record<string, Json>;
  return Object.entries(properties).flatMap(([name, property]): [string, string[]][] => {
    const inner = (property.items?.properties ?? property.properties) as Json | undefined;
    return inner ? [[name, Object.keys(inner)]] : [];
  });
}

describeWithBrowser('API reference in Chromium: /docs (Scalar) and /docs/errors', (executablePath) => {
  let gw: TestGateway;
  let base: string;
  let browser: Browser;
  let doc: Json;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    gw = await buildTestGateway();
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
    doc = (await (await fetch(`${base}/openapi.json`)).json()) as Json;
    browser = await launchChromium(executablePath);
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.app.close();
  });

  it(
    'renders every operation of the live /openapi.json with its errors, headers, nested fields and <API_KEY> samples',
    // Every response of every operation is opened: 18 operations with up to ten statuses each.
    { timeout: 900_000 },
    async () => {
      const { page, requests, offLoopback, errors } = await watchedPage(browser);
      const response = await page.goto(`${base}/docs`);
      expect(response?.status()).toBe(200);
      expect(page.url()).toBe(`${base}/docs/`);
      expect(response?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
      await page.getByText(doc.info.title, { exact: true }).first().waitFor({ timeout: WAIT_MS });
      await page.screenshot({ path: `${ARTIFACTS}docs.png` });

      const operations = Object.entries(doc.paths as Record<string, Json>).flatMap(([path, methods]) =>
        Object.entries(methods).map(([method, op]) => ({
          path,
          method: method.toUpperCase(),
          op: op as Json,
        })),
      );
      expect(operations.length).toBeGreaterThanOrEqual(9);
      for (const { path, method, op } of operations) {
        const label = `${method} ${path}`;
        // Scalar's section ids end in /<METHOD><path> (e.g. api-1/tag/open/GET/health).
        const section = page.locator(`[id$="/${method}${path}"]`);
        expect(await section.count(), label).toBe(1);
        await section.scrollIntoViewIfNeeded({ timeout: WAIT_MS });
        await section.getByText(op.summary, { exact: true }).first().waitFor({ timeout: WAIT_MS });
        const id = await section.getAttribute('id');

        for (const [status, documented] of Object.entries(op.responses as Record<string, Json>)) {
          const at = `${label} ${status}`;
          // The complete error list: every code of the response, linked to its /docs/errors anchor.
          const json = documented.content?.['application/json'] as Json | undefined;
          const examples = (json?.examples ?? {}) as Json;
          if (json?.schema?.$ref === '#/components/schemas/Error') {
            expect(Object.keys(examples).length, `${at}: codes listed`).toBeGreaterThan(0);
          }
          for (const { value } of Object.values(examples) as Json[]) {
            const link = section.locator(`a[href="${value.error.docs_url}"]`).first();
            await link.waitFor({ timeout: WAIT_MS });
            expect(await link.textContent(), at).toBe(value.error.code);
          }
          // Headers (rate limits, request id, Retry-After, Idempotent-Replayed): expand and read them.
          const names = headerNames(documented);
          if (names.length === 0) continue;
          const item = page.locator(`[id="${id}.responses.${status}"]`).locator(INNERMOST_LI);
          await item.getByText('Headers', { exact: true }).first().click({ timeout: WAIT_MS });
          for (const name of names) {
            await item.getByText(name, { exact: true }).first().waitFor({ timeout: WAIT_MS });
          }
        }

        // Nested response shapes: every object (or array of objects) field of the success body opens up.
        const success = Object.keys(op.responses as Json).find((s) => s.startsWith('2')) ?? '200';
        const ok = inlined(doc as never, op.responses[success]?.content?.['application/json']?.schema) as
          Json | undefined;
        for (const [field, children] of nestedProperties(ok)) {
          const at = `${label} ${success} ${field}`;
          const property = page.locator(`[id="${id}.responses.${success}.${field}"]`).locator(INNERMOST_LI);
          const toggle = property.locator('button[aria-expanded]').first();
          await toggle.click({ timeout: WAIT_MS });
          expect(await toggle.getAttribute('aria-expanded'), at).toBe('true');
          for (const child of children) {
            await property.getByText(child, { exact: true }).first().waitFor({ timeout: WAIT_MS });
          }
        }

        // Authenticated operations: the Idempotency-Key header, and request samples carrying <API_KEY>.
        if ((op.security as unknown[]).length > 0) {
          // Counted operations take an Idempotency-Key; the account-only reads (jobs) do not.
          if ((op.parameters as Json[]).some((p) => p.name === 'Idempotency-Key')) {
            await page.locator(`[id="${id}.headers.Idempotency-Key"]`).waitFor({ timeout: WAIT_MS });
          }
          const sample = section.locator('pre', { hasText: 'curl' }).first();
          // Visible, not merely in the DOM: Scalar hides credentials in samples unless told otherwise.
          await sample.getByText(API_KEY_PLACEHOLDER).first().waitFor({ timeout: WAIT_MS });
          const text = await sample.innerText();
          expect(text, label).toContain(`X-API-Key: ${API_KEY_PLACEHOLDER}`);
          // Path parameters are filled in by the sample; the fixed part of the path is there as written.
          expect(text, label).toContain(path.split('{')[0]!);
        }
      }

      // The whole reference as one image: long (every operation, every status), so slow to render.
      await page.screenshot({ path: `${ARTIFACTS}docs-full.png`, fullPage: true, timeout: 4 * WAIT_MS });
      expect(requests.length).toBeGreaterThan(0);
      expect(offLoopback).toEqual([]);
      expect(errors).toEqual([]);
      await page.close();
    },
  );

  it(
    '/docs/errors shows one anchor per code, and every docs_url of the reference lands on one',
    { timeout: 300_000 },
    async () => {
      const { page, offLoopback, errors } = await watchedPage(browser);
      const response = await page.goto(`${base}/docs/errors`);
      expect(response?.status()).toBe(200);
      expect(response?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
      for (const code of ERROR_CODES) {
        const anchor = docsUrl(code).split('#')[1]!;
        const section = page.locator(`[id="${anchor}"]`);
        await section.scrollIntoViewIfNeeded({ timeout: WAIT_MS });
        expect(await section.isVisible(), code).toBe(true);
        expect(await section.locator('h2').innerText(), code).toBe(code);
      }
      await page.screenshot({ path: `${ARTIFACTS}docs-errors.png`, fullPage: true });

      // A docs_url followed from the reference lands on its section of /docs/errors.
      await page.goto(`${base}/docs`);
      const link = page.locator('a[href="/docs/errors#unauthorized"]').first();
      await link.scrollIntoViewIfNeeded({ timeout: WAIT_MS });
      await link.click({ timeout: WAIT_MS });
      await page.waitForURL(`${base}/docs/errors#unauthorized`, { timeout: WAIT_MS });
      expect(await page.locator('[id="unauthorized"]').isVisible()).toBe(true);

      expect(offLoopback).toEqual([]);
      expect(errors).toEqual([]);
      await page.close();
    },
  );
});

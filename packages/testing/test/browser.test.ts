import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { describeWithBrowser, launchChromium } from '../src/browser/index.ts';

describeWithBrowser('browser harness: Debian Chromium through playwright-core', (executablePath) => {
  let browser: Browser;
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>subx harness</title><p id="p">rendered</p>');
  });

  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    browser = await launchChromium(executablePath);
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('opens a loopback page and reads what it rendered', async () => {
    const page = await browser.newPage();
    const { port } = server.address() as AddressInfo;
    await page.goto(`http://127.0.0.1:${port}/`);
    expect(await page.title()).toBe('subx harness');
    expect(await page.textContent('#p')).toBe('rendered');
  });
});

/**
 * The first-request snippets run as written: each (curl in sh, JavaScript in node, Python in
 * python3) is executed against a local HTTP server that records what arrives. The browser test
 * runs them against the real gateway.
 */
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstRequest, shellQuote, videoUrl } from './first-request.ts';
import { commandAvailable as installed } from '../../test/support.ts';

const run = promisify(execFile);
const KEY = 'sxk_v1_abcdefghijklmnopqrstuvwxyz012345';
// A URL with a quote in it: the snippets must not break on what they interpolate.
const VIDEO = 'https://www.youtube.com/watch?v=F1xioXWb8CY&t=\'1"';

interface Seen {
  method: string;
  url: string;
  key: string | undefined;
  type: string | undefined;
  body: unknown;
}

describe('first request snippets', () => {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({
        method: req.method!,
        url: req.url!,
        key: req.headers['x-api-key'] as string | undefined,
        type: req.headers['content-type'],
        body: JSON.parse(body) as unknown,
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"video_id":"F1xioXWb8CY"}');
    });
  });
  let base = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const expected = (): Seen => ({
    method: 'POST',
    url: '/api/v1/extract',
    key: KEY,
    type: 'application/json',
    body: { url: VIDEO },
  });

  it('quotes for the shell and builds watch URLs', () => {
    expect(shellQuote("a'b")).toBe(`'a'\\''b'`);
    expect(videoUrl('F1xioXWb8CY')).toBe('https://www.youtube.com/watch?v=F1xioXWb8CY');
  });

  it('curl sends the extract request with the key', async (ctx) => {
    if (!(await installed('curl'))) ctx.skip();
    const { stdout } = await run('sh', ['-c', firstRequest(base, KEY, VIDEO).curl], { timeout: 20_000 });
    expect(stdout).toContain('F1xioXWb8CY');
    expect(seen.at(-1)).toEqual(expected());
  });

  it('the JavaScript runs in Node as a module', async () => {
    const { stdout } = await run(
      process.execPath,
      ['--input-type=module', '-e', firstRequest(base, KEY, VIDEO).javascript],
      { timeout: 20_000 },
    );
    expect(stdout).toContain('200');
    expect(seen.at(-1)).toEqual(expected());
  });

  it('the Python runs with the standard library', async (ctx) => {
    if (!(await installed('python3'))) ctx.skip();
    const { stdout } = await run('python3', ['-c', firstRequest(base, KEY, VIDEO).python], {
      timeout: 20_000,
    });
    expect(stdout).toContain("200 {'video_id': 'F1xioXWb8CY'}");
    expect(seen.at(-1)).toEqual(expected());
  });
});

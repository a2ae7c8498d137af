/**
 * After `bash scripts/containers.sh up`, the README's "Try it" commands answer on localhost:8080
 * exactly as with `npm run demo` (test/system/demo-readme.test.ts): run verbatim with curl, each
 * a 2xx with the content type its format asks for, through the containerized gateway.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD, GATEWAY, root } from './stack.ts';

const MARK = '__subx_status__';

function readmeExamples(readme: string): string[] {
  const section = readme.split(/^## Try it$/m)[1];
  const block = section && /```bash\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('README.md has no bash block under "## Try it"');
  return block
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
}

const examples = readmeExamples(readFileSync(join(root, 'README.md'), 'utf8'));
let curlHome = '';

beforeAll(() => {
  curlHome = mkdtempSync(join(tmpdir(), 'subx-curl-'));
  writeFileSync(join(curlHome, '.curlrc'), `write-out = "\\n${MARK} %{http_code} %{content_type}"\n`);
});
afterAll(() => rmSync(curlHome, { recursive: true, force: true }));

function curl(command: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['-c', command],
      { env: { ...process.env, CURL_HOME: curlHome }, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('the README against the containers', () => {
  it('the stack answers on localhost:8080 (API) and localhost:8090 (dashboard)', async () => {
    expect(GATEWAY).toBe('http://localhost:8080');
    expect((await fetch(`${GATEWAY}/health/ready`)).status).toBe(200);
    expect((await fetch(`${DASHBOARD}/health/ready`)).status).toBe(200);
  });

  it.each(examples)('README: %s', async (command) => {
    expect(command).toMatch(/^curl /);
    expect(command).toContain('localhost:8080');
    const { code, stdout, stderr } = await curl(command);
    expect(code, stderr).toBe(0);
    const at = stdout.lastIndexOf(`\n${MARK} `);
    expect(at, `no write-out in curl's output: ${stdout}`).toBeGreaterThanOrEqual(0);
    const body = stdout.slice(0, at);
    const [status, contentType = ''] = stdout
      .slice(at + MARK.length + 2)
      .trim()
      .split(' ');
    expect(Number(status), body).toBeGreaterThanOrEqual(200);
    expect(Number(status), body).toBeLessThan(300);
    const format = /"format":"(\w+)"/.exec(command)?.[1] ?? 'json';
    if (format === 'json') {
      expect(contentType).toMatch(/^application\/json/);
      const parsed = JSON.parse(body) as Record<string, unknown>;
      expect(parsed).not.toHaveProperty('error');
      // Search answers results of its own; batch and playlist report failed items inside a 200.
      if (command.includes('/api/v1/search')) expect(parsed.results).not.toEqual([]);
      else if (Array.isArray(parsed.results))
        expect(parsed.results.some((r: { success?: boolean }) => r.success)).toBe(true);
    } else {
      expect(contentType).toMatch(/^text\//);
      expect(body.length).toBeGreaterThan(0);
    }
  });
});

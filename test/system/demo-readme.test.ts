/**
 * The README's "Try it" examples, run verbatim with curl against `npm run demo` (the launcher
 * `scripts/start-embedded.ts --demo` as a child process on a free port), so the README cannot
 * drift from the system. The only change to each command is the address: `localhost:8080` becomes
 * the port the launcher got. The status and content type come from a `.curlrc` write-out, so the
 * command text itself stays untouched.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnLauncher, type Launcher } from '@subx/embedded/launcher';

const root = fileURLToPath(new URL('../../', import.meta.url));
const MARK = '__subx_status__';

/** The commands of the first bash block under "## Try it", continuation lines joined. */
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

let launcher: Launcher;
/** Hosts the demo tried to reach past loopback (packages/testing/src/no-network.ts): none, ever. */
let refusedLog = '';
let output = '';
let address = '';
let curlHome = '';

function run(command: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['-c', command],
      { env: { ...process.env, CURL_HOME: curlHome }, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error ? (error.code as number) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  curlHome = mkdtempSync(join(tmpdir(), 'subx-curl-'));
  writeFileSync(join(curlHome, '.curlrc'), `write-out = "\\n${MARK} %{http_code} %{content_type}"\n`);
  refusedLog = join(curlHome, 'refused-hosts');
  writeFileSync(refusedLog, '');
  // The demo runs with every connection past loopback refused (and every lookup of another name):
  // each documented call still answers, and the log of refused hosts stays empty.
  launcher = spawnLauncher(
    ['--demo'],
    {
      NO_NETWORK_LOG: refusedLog,
      PORT: '0',
      LOG_LEVEL: 'error',
      YOUTUBE_BASE_URL: '',
      ADMIN_TOKEN: '',
      API_KEY_PEPPER: '',
      REDIS_URL: '',
      KAFKA_BROKERS: '',
      MONGO_URL: '',
      OPENAI_API_KEY: '',
    },
    { nodeFlags: ['--import', join(root, 'packages/testing/src/no-network.ts')] },
  );
  await launcher.waitFor(/Ctrl-C stops everything/, 60_000);
  output = launcher.output();
  address = /subx is running at http:\/\/([^\s/]+)/.exec(output)![1]!;
}, 90_000);

afterAll(async () => {
  await launcher?.stop();
  if (curlHome) rmSync(curlHome, { recursive: true, force: true });
});

describe('npm run demo', () => {
  it('prints the fixed demo key, the replay and the videos to try', () => {
    expect(output).toContain('pro API key:  sxk_v1_demoDemoDemoDemoDemoDemoDemoDemo');
    expect(output).toMatch(/YouTube: +http:\/\/127\.0\.0\.1:\d+ +\(local replay of recorded videos/);
    for (const id of ['F1xioXWb8CY', 'it3OtbTxQk0', 'dsMFmonKDD4', '8VajtrESJzA', 'synthCmnts1'])
      expect(output).toContain(id);
    expect(output).toContain('PLsubxDemoPlaylist01');
  });

  it('reaches no host past loopback: nothing was even tried', () => {
    expect(readFileSync(refusedLog, 'utf8')).toBe('');
  });

  it('answers mode auto on the captionless video with a documented error, never a 500', async () => {
    const { stdout } = await run(
      `curl -s -X POST http://${address}/api/v1/extract -H 'X-API-Key: sxk_v1_demoDemoDemoDemoDemoDemoDemoDemo' ` +
        `-H 'content-type: application/json' -d '{"url":"https://youtu.be/dsMFmonKDD4","mode":"auto"}'`,
    );
    const status = Number(stdout.slice(stdout.lastIndexOf(`\n${MARK} `) + MARK.length + 2).split(' ')[0]);
    expect(status, stdout).not.toBe(500);
    expect(status === 200 || (status >= 400 && status < 600), stdout).toBe(true);
    if (status !== 200) expect(stdout).toMatch(/"code":"[A-Z_]+"/);
    expect(readFileSync(refusedLog, 'utf8')).toBe('');
  });

  it('the README has curl examples for every operation', () => {
    const paths = examples.map((c) => /localhost:8080(\/[^\s?"']*)/.exec(c)?.[1]);
    expect(new Set(paths)).toEqual(
      new Set([
        '/health',
        '/api/v1/validate',
        '/api/v1/extract',
        '/api/v1/batch',
        '/api/v1/playlist',
        '/api/v1/search',
        '/api/v1/summarize',
        '/api/v1/comments',
        '/api/v1/comments/analyze',
      ]),
    );
  });

  it.each(examples)('README: %s', async (command) => {
    // One plain curl call per line: a pipe or a second command would escape the status check.
    expect(command).toMatch(/^curl /);
    expect(command).not.toMatch(/[|;&]\s|&&|`|\$\(/);
    const { code, stdout, stderr } = await run(command.replaceAll('localhost:8080', address));
    if (code === 127) throw new Error('curl is not installed (Debian: apt-get install curl)');
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
      // Batch and playlist report failed items inside a 200; at least one item must have worked.
      if (command.includes('/api/v1/search')) expect(parsed.results).not.toEqual([]);
      else if (Array.isArray(parsed.results))
        expect(parsed.results.some((r: { success?: boolean }) => r.success)).toBe(true);
    } else {
      expect(contentType).toMatch(/^text\//);
      expect(body.length).toBeGreaterThan(0);
    }
  });
});

describe('npm start (without --demo)', () => {
  it('talks to the real platform, says so, and prints a fresh key, not the demo key', async () => {
    const start = spawnLauncher([], {
      PORT: '0',
      LOG_LEVEL: 'error',
      YOUTUBE_BASE_URL: '',
      REDIS_URL: '',
      KAFKA_BROKERS: '',
      MONGO_URL: '',
    });
    try {
      await start.waitFor(/Ctrl-C stops everything/, 60_000);
      const banner = start.output();
      expect(banner).toMatch(/YouTube: +https:\/\/www\.youtube\.com +\(the real platform; `npm run demo`/);
      expect(banner).toMatch(/pro API key: +sxk_v1_[A-Za-z0-9]{32}/);
      expect(banner).not.toContain('sxk_v1_demoDemoDemoDemoDemoDemoDemoDemo');
      expect(banner).not.toContain('DEMO');
    } finally {
      await start.stop();
    }
  }, 90_000);
});

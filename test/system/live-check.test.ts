/**
 * The live canary (`npm run live-check`) is for people with internet access; here it runs as a child
 * process against the fake platform in today's mode, so its wiring, table and verdict stay true.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playlistIds, startFakeYouTube, videoIds, type FakeYouTube } from '@subx/testing/fake-youtube';

const root = fileURLToPath(new URL('../../', import.meta.url));

function run(env: Record<string, string>, args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['scripts/live-check.ts', ...args], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

let fake: FakeYouTube;
let targets = '';
beforeAll(async () => {
  fake = await startFakeYouTube({ mode: 'today' });
  targets = join(tmpdir(), `live-check-targets-${process.pid}.json`);
  writeFileSync(
    targets,
    JSON.stringify({
      videos: [
        { id: videoIds.manualAndAuto, language: 'en', what: 'manual en' },
        { id: videoIds.autoOnlyFrench, language: 'fr', what: 'auto fr' },
      ],
      playlists: [{ id: playlistIds.classic, what: 'header-only first page' }],
      comments: [{ id: videoIds.syntheticComments, what: 'synthetic thread' }],
    }),
  );
});
afterAll(() => fake.close());

describe('npm run live-check against the fake platform', () => {
  it('prints a row per operation with outcome, requests, latency and client, and exits 0 when healthy', async () => {
    const { code, out } = await run({ YOUTUBE_BASE_URL: fake.url }, ['--targets', targets]);
    expect(out).toMatch(/operation\s+target\s+outcome\s+requests\s+ms\s+client/);
    expect(out).toMatch(new RegExp(`transcript\\s+${videoIds.manualAndAuto}\\s+ok\\s+3\\s+\\d+\\s+VISIONOS`));
    expect(out).toMatch(new RegExp(`playlist\\s+${playlistIds.classic}\\s+ok`));
    expect(out).toMatch(/comments\s+\S+\s+ok/);
    // the canary's probes: every client of the ladder on its own
    for (const client of ['VISIONOS', 'ANDROID', 'IOS']) {
      expect(out).toMatch(new RegExp(`ladder\\s+${client}@direct\\s+ok\\s+\\d+\\s+\\d+\\s+${client}`));
    }
    expect(out).toContain('HEALTHY');
    expect(code).toBe(0);
  });

  it('exits non-zero when the core operations fail', async () => {
    fake.failNext({ kind: 'botCheck' }, { endpoint: 'player', times: 1000 });
    try {
      const { code, out } = await run({ YOUTUBE_BASE_URL: fake.url }, ['--targets', targets, '--json']);
      expect(out).toContain('"outcome":"UPSTREAM_BLOCKED/bot_check"');
      expect(out).toContain('FAILING');
      expect(code).toBe(1);
    } finally {
      fake.reset();
    }
  });
});

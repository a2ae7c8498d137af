/**
 * Client identities as hot configuration (YOUTUBE_CLIENTS_FILE): a valid edit of the file changes
 * which clients the next extract asks, with no restart; a bad edit is refused with one log line and
 * the identities in use are kept; a bad file at start refuses to start.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeYouTube, videoIds, type FakeYouTube } from '@subx/testing/fake-youtube';
import { YouTubeClient } from '../src/client.ts';
import { loadYouTubeConfig } from '../src/config.ts';

let fake: FakeYouTube;
let dir: string;
beforeAll(async () => {
  fake = await startFakeYouTube();
  dir = mkdtempSync(path.join(tmpdir(), 'subx-clients-'));
});
afterAll(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => fake.reset());

const playerClients = () =>
  fake.requests
    .filter((r) => r.endpoint === 'player' && !r.query.$fields)
    .map((r) => `${r.clientName}/${r.clientVersion}`);

function logs() {
  const lines: Array<{ level: string; msg: string; fields: object }> = [];
  const at = (level: string) => (fields: object, msg?: string) =>
    void lines.push({ level, msg: msg ?? '', fields });
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines };
}

describe('client identities file', () => {
  it('applies a valid edit to the next extract, and refuses a bad one keeping the identities in use', async () => {
    const file = path.join(dir, 'clients.json');
    writeFileSync(file, JSON.stringify({ order: ['ANDROID'] }));
    const { logger, lines } = logs();
    const yt = YouTubeClient.create(
      loadYouTubeConfig({ YOUTUBE_BASE_URL: fake.url, YOUTUBE_CLIENTS_FILE: file }),
      {
        logger,
      },
    );
    try {
      await yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
      expect(playerClients()[0]).toMatch(/^ANDROID\//);

      // a new IOS version rolled out: the edit is the whole roll-out
      writeFileSync(file, JSON.stringify({ order: ['IOS'], clients: { IOS: { version: '99.1.0' } } }));
      await yt.reloadIdentities();
      expect(lines.find((l) => l.msg === 'client identities reloaded from the file')?.fields).toMatchObject({
        order: ['IOS'],
        versions: { IOS: '99.1.0' },
      });
      fake.reset();
      await yt.getTranscript({ videoId: videoIds.autoOnly, language: 'en' });
      expect(playerClients()[0]).toBe('IOS/99.1.0');

      // a broken edit: refused, one error line naming every problem, IOS 99.1.0 still in use
      writeFileSync(file, JSON.stringify({ order: ['IOS', 'NOKIA'] }));
      await yt.reloadIdentities();
      writeFileSync(file, '{ not json');
      await yt.reloadIdentities();
      const refusals = lines.filter((l) => l.level === 'error');
      expect(refusals.map((l) => (l.fields as { problems: string }).problems)).toEqual([
        "the file names an unknown client 'NOKIA'",
        'the file must be JSON',
      ]);
      fake.reset();
      await yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en', include: [] });
      expect(playerClients()[0]).toBe('IOS/99.1.0');

      // the file briefly missing (a ConfigMap's symlink swap): a warning, nothing changes
      rmSync(file);
      await yt.reloadIdentities();
      expect(lines.at(-1)).toMatchObject({
        level: 'warn',
        msg: 'client identities file unreadable; keeping the identities in use',
      });
    } finally {
      await yt.close();
    }
  });

  it('picks an edit up on its own within the check interval', async () => {
    const file = path.join(dir, 'timer.json');
    writeFileSync(file, JSON.stringify({ order: ['ANDROID'] }));
    const yt = YouTubeClient.create(
      loadYouTubeConfig({
        YOUTUBE_BASE_URL: fake.url,
        YOUTUBE_CLIENTS_FILE: file,
        YOUTUBE_CLIENTS_FILE_CHECK_MS: '1000',
      }),
    );
    try {
      writeFileSync(file, JSON.stringify({ order: ['IOS'] }));
      await expect
        .poll(
          async () => {
            fake.reset();
            await yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en', include: [] });
            return playerClients()[0]?.split('/')[0];
          },
          { timeout: 10_000, interval: 300 },
        )
        .toBe('IOS');
    } finally {
      await yt.close();
    }
  });

  it('refuses to start on a missing or bad file, or with both ways of setting identities', () => {
    const bad = path.join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ order: [] }));
    expect(() => loadYouTubeConfig({ YOUTUBE_CLIENTS_FILE: path.join(dir, 'missing.json') })).toThrow(
      /YOUTUBE_CLIENTS_FILE .*missing\.json cannot be read \(ENOENT\)/,
    );
    expect(() => loadYouTubeConfig({ YOUTUBE_CLIENTS_FILE: bad })).toThrow(
      /YOUTUBE_CLIENTS_FILE .*bad\.json\.order must be a non-empty array of client names/,
    );
    expect(() =>
      loadYouTubeConfig({ YOUTUBE_CLIENTS_FILE: bad, YOUTUBE_CLIENTS: '{"order":["IOS"]}' }),
    ).toThrow(/set YOUTUBE_CLIENTS or YOUTUBE_CLIENTS_FILE, not both/);
  });
});

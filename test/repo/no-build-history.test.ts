/**
 * The project's files speak of the product, not of how it was built: no numbered work logs or
 * tickets ("issue 23", "session 18"), nothing about the machines it was built on or the people who
 * shared them. The history is in git. Recorded fixtures and a changelog are exempt (they name
 * their sources and releases); a Kafka "session 10 s" timing is a setting, not a log.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const SELF = 'test/repo/no-build-history.test.ts';
const EXEMPT = [/^packages\/testing\/fixtures-recorded\//, /^CHANGELOG\.md$/, /\.(png|jpg|lock)$/];

const HISTORY: [string, RegExp][] = [
  ['a numbered ticket', /\b(?:issue|ticket) #?\d+\b(?! *[–-])/i],
  ['a numbered work session', /\bsession \d+\b(?! ?(?:s|ms|min|seconds?)\b)/i],
  ['the build machine', /\bCI-class\b|\bother engineers\b|\bengineers' builds\b/i],
];
// A public project's own issue tracker (yt-dlp issue #11426) is a source, not our history.
const SOURCE =
  /\b(?:yt-dlp|kafkajs|grpc-node|fastify|node|NewPipe\w*|youtube-transcript-api|YouTube\.js)(?: wiki)?[^.\n]{0,40}issue #?\d+/i;

function trackedFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 });
  return out
    .split('\0')
    .filter((f) => f && f !== SELF && !EXEMPT.some((e) => e.test(f)) && existsSync(join(root, f)));
}

describe('no build history in the project’s files', () => {
  it('no tracked file speaks of tickets, work sessions or the machines it was built on', () => {
    const found: string[] = [];
    for (const file of trackedFiles()) {
      const text = readFileSync(join(root, file), 'utf8');
      if (text.includes('\0')) continue; // binary
      text.split('\n').forEach((line, i) => {
        for (const [what, pattern] of HISTORY) {
          if (pattern.test(line) && !SOURCE.test(line))
            found.push(`${file}:${i + 1}: ${what}: ${line.trim().slice(0, 120)}`);
        }
      });
    }
    expect(found).toEqual([]);
  });

  it('catches what it is meant to catch', () => {
    const hit = (line: string) => HISTORY.some(([, p]) => p.test(line)) && !SOURCE.test(line);
    expect(hit('// Issue 14 item 4: a restarted peer')).toBe(true);
    expect(hit('measured in session 23 on a faster machine')).toBe(true);
    expect(hit('on the 2-core CI-class machine')).toBe(true);
    expect(hit('Kafka group timings: session 10 s, heartbeat 300 ms')).toBe(false);
    expect(hit('(yt-dlp wiki, "Common YouTube Errors"; yt-dlp issue #11426)')).toBe(false);
  });
});

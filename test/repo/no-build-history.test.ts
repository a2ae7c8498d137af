/**
 * The project's files speak of the product, not of how it was built: no numbered work logs or
 * tickets ("issue 23", "session 18"), nothing about the machines it was built on or the people who
 * shared them, no diary of figures before and after a change, no dates a comment was written on.
 * The history is in git; figures live in docs/benchmarks.md (and the CI timings in docs/running.md,
 * exempt from the machine and before/after rules). Recorded fixtures and a changelog are exempt
 * (they name their sources and releases); a Kafka "session 10 s" timing is a setting, not a log;
 * a date in a comment is fine when it says what happened on it ("retired on 2026-09-11", "since",
 * a protocol "revision") or is an example value in quotes.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const SELF = 'test/repo/no-build-history.test.ts';
const EXEMPT = [/^packages\/testing\/fixtures-recorded\//, /^CHANGELOG\.md$/, /\.(png|jpg|lock)$/];

/** Where figures belong, so where the machine they ran on and before/after pairs may be named. */
const FIGURES = [/^docs\/benchmarks\.md$/, /^docs\/running\.md$/];
const CODE = /\.(?:[cm]?[jt]s|sh|py|go|ya?ml|cjs)$|(?:^|\/)Dockerfile[^/]*$/;

const HISTORY: [string, RegExp][] = [
  ['a numbered ticket', /\b(?:issue|ticket) #?\d+\b(?! *[–-])/i],
  ['a numbered work session', /\bsession \d+\b(?! ?(?:s|ms|min|seconds?)\b)/i],
  ['the build machine', /\bCI-class\b|\bother engineers\b|\bengineers' builds\b/i],
  [
    'a work session',
    /\b(?:this|that|the same|an earlier|a previous|the last) session['’]s (?:\w+ )?(?:runs?|figures?|measurements?|benchmarks?)\b/i,
  ],
];
const MACHINE: [string, RegExp][] = [
  [
    'the machine it ran on',
    /\b\d+-core (?:machine|box|host|laptop|runner)\b|\bmachines? of \d+ cores\b|\(\d+ cores, under load\)/i,
  ],
  [
    'figures before and after',
    /\bwent from [\d.,–-]+ ?\S* to [\d.,–-]+|\b\d[\d.,–-]*\s?\S{0,12} before and [\d.,–-]+\s?\S{0,12} after\b|\bruns of before and after\b/i,
  ],
];
// A date in a comment (//, #, or a block comment's * line), not an example in quotes and not the
// day something happened ("on", "since", "as of", a protocol "revision").
const COMMENT = /^\s*(?:\/\/|#|\*|\/\*)/;
const BARE_DATE =
  /(?<!\b(?:on|since|of|revision|until|after|before|from|to) )(?<!["'`])\b20\d\d-[01]\d-[0-3]\d\b(?!["'`])/;

/** What a line of `file` says about the build's history, if anything. */
function findings(file: string, line: string): string[] {
  const rules = [...HISTORY, ...(FIGURES.some((f) => f.test(file)) ? [] : MACHINE)];
  const found = rules.filter(([, p]) => p.test(line) && !SOURCE.test(line)).map(([what]) => what);
  if (CODE.test(file) && COMMENT.test(line) && BARE_DATE.test(line)) found.push('a bare date in a comment');
  return found;
}
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
        for (const what of findings(file, line))
          found.push(`${file}:${i + 1}: ${what}: ${line.trim().slice(0, 120)}`);
      });
    }
    expect(found).toEqual([]);
  });

  it('catches what it is meant to catch', () => {
    const hit = (line: string, file = 'README.md') => findings(file, line).length > 0;
    expect(hit('// Issue 14 item 4: a restarted peer')).toBe(true);
    expect(hit('measured in session 23 on a faster machine')).toBe(true);
    expect(hit('on the 2-core CI-class machine')).toBe(true);
    expect(hit('Kafka group timings: session 10 s, heartbeat 300 ms')).toBe(false);
    expect(hit('(yt-dlp wiki, "Common YouTube Errors"; yt-dlp issue #11426)')).toBe(false);
    expect(hit("the full benchmark's p99 was 18–23 ms in this session's four runs")).toBe(true);
    expect(hit("p99 3 ms (the same session's figures)")).toBe(true);
    expect(hit("// Another visitor's token does not work in this session.")).toBe(false);
    expect(hit("// Not sealed with this session's key: nothing to show.")).toBe(false);
    expect(hit('Measured on a 2-core machine under heavy load')).toBe(true);
    expect(hit('How long a run takes on a machine of 2 cores: cold')).toBe(true);
    expect(hit('Measured on a 2-core machine under heavy load', 'docs/benchmarks.md')).toBe(false);
    expect(hit('Sized for a 2-core node that CI shares with the cluster')).toBe(false);
    expect(hit('extracts went from 549–681 to 1,358–1,493 requests/s')).toBe(true);
    expect(hit('answered 669–703 requests/s before and 894–940 after')).toBe(true);
    expect(hit('runs of before and after interleaved')).toBe(true);
    expect(hit('what holds before and after a restart')).toBe(false);
    const ts = 'src/x.ts';
    expect(hit('// measured 2026-11-25 on the loaded box', ts)).toBe(true);
    expect(hit(' * tuned (2026-11-25): 4 ms, not 2', ts)).toBe(true);
    expect(hit('# warm run 2026-11-25: 20 min', 'scripts/x.sh')).toBe(true);
    expect(hit(' * to every /player on 2026-09-11, a fixed ladder', ts)).toBe(false);
    expect(hit('/** MCP tool annotations (protocol revision 2025-11-25) */', ts)).toBe(false);
    expect(hit('/** "26 Nov": a chart label, from "2026-11-26". */', ts)).toBe(false);
    expect(hit("const day = '2026-11-25';", ts)).toBe(false);
    expect(hit('measured 2026-11-25', 'README.md')).toBe(false);
  });
});

/**
 * The repository stands alone: a clone with nothing beside it must build, test and read. No tracked
 * file (code, test, script, CI step, doc) may point at the workspace the project was written in
 * beside the clone, and every relative link in the Markdown files must reach a file of the clone.
 * The recorded fixtures are exempt: their MANIFEST names the paths they were staged from.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const SELF = 'test/repo/self-contained.test.ts';
const EXEMPT = 'packages/testing/fixtures-recorded/';

/** A path out of the clone into the workspace beside it (a sibling module `../shared.ts` is not). */
const OUTSIDE = /\.\.\/shared\b(?!\.\w)|\bshared\/(?:spec|docs|fixtures)\b/;

function trackedFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 });
  return out.split('\0').filter((f) => f && existsSync(join(root, f)));
}

/** Relative link targets of a Markdown text, outside code blocks and code spans. */
function relativeLinks(markdown: string): string[] {
  const prose = markdown.replace(/^(```|~~~)[\s\S]*?^\1/gm, '').replace(/`[^`\n]*`/g, '');
  const targets = [
    ...[...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!),
    ...[...prose.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1]!),
  ];
  return targets.filter((t) => !/^(?:[a-z][a-z0-9+.-]*:|#|\/)/i.test(t));
}

const files = trackedFiles();

describe('the repository stands alone', () => {
  it('has tracked files to check (a git checkout)', () => {
    expect(files).toContain('README.md');
  });

  it('no tracked file outside the recorded fixtures refers to the workspace beside the clone', () => {
    const offenders: string[] = [];
    for (const file of files) {
      if (file === SELF || file.startsWith(EXEMPT)) continue;
      const text = readFileSync(join(root, file), 'utf8');
      text.split('\n').forEach((line, i) => {
        if (OUTSIDE.test(line)) offenders.push(`${file}:${i + 1}: ${line.trim().slice(0, 160)}`);
      });
    }
    expect(offenders).toEqual([]);
  });

  it('every relative link in a tracked Markdown file reaches a file or folder of the clone', () => {
    const broken: string[] = [];
    const markdown = files.filter((f) => f.endsWith('.md'));
    expect(markdown.length).toBeGreaterThan(5);
    for (const file of markdown) {
      for (const target of relativeLinks(readFileSync(join(root, file), 'utf8'))) {
        const path = decodeURIComponent(target.replace(/[#?].*$/, ''));
        if (!path) continue;
        const resolved = normalize(join(dirname(file), path));
        if (resolved.startsWith('..') || !existsSync(join(root, resolved)))
          broken.push(`${file}: (${target})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('finds links the way a Markdown renderer does', () => {
    const md = [
      'See [the API](docs/api.md#errors) and [up](../x.md "title").',
      '[ref]: ./scripts/engines.md',
      '`[not](a-link.md)` and [web](https://example.com) and [anchor](#x) and [api](/docs/errors)',
      '```',
      '[in](code.md)',
      '```',
    ].join('\n');
    expect(relativeLinks(md)).toEqual(['docs/api.md#errors', '../x.md', './scripts/engines.md']);
  });
});

/**
 * Where test helpers live (docs/decisions.md, "One helper per need in tests"): what a workspace's
 * tests share is in its test/ folder, named support.ts or <topic>-support.ts, never in src/ (which
 * holds what ships and the unit tests beside it), and never under another name (helpers, utils).
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

const HELPER_NAME = /(?:^|[/-])(?:test-?)?(?:helpers?|support)\.ts$|(?:^|\/)test\/(?:.+\/)?[^/]*utils?\.ts$/;
const PLACE =
  /^(?:packages|services)\/[^/]+\/test\/(?:.+\/)?(?:[a-z0-9-]+-)?support\.ts$|^test\/(?:.+\/)?(?:[a-z0-9-]+-)?support\.ts$/;

function misplaced(files: readonly string[]): string[] {
  return files.filter((f) => HELPER_NAME.test(f) && !PLACE.test(f));
}

describe('test helpers', () => {
  it('live under test/ as support.ts or <topic>-support.ts', () => {
    const files = execFileSync('git', ['ls-files', '-z', 'packages', 'services', 'test'], {
      cwd: root,
      encoding: 'utf8',
    })
      .split('\0')
      .filter((f) => f.endsWith('.ts') && !f.includes('/node_modules/'));
    expect(misplaced(files)).toEqual([]);
  });

  it('catches what it is meant to catch', () => {
    expect(
      misplaced([
        'services/dashboard/src/test-support.ts',
        'services/gateway/src/access/test-support.ts',
        'packages/youtube/test/helpers.ts',
        'packages/testing/test/fake-youtube-helpers.ts',
        'services/x/test/utils.ts',
      ]),
    ).toHaveLength(5);
    expect(
      misplaced([
        'services/dashboard/test/support.ts',
        'services/gateway/test/http/jobs-support.ts',
        'packages/testing/test/fake-youtube-support.ts',
        'test/system/faults/support.ts',
        'services/gateway/src/http/route-context.ts',
        'packages/ports/src/event-bus/kafka/util.ts',
      ]),
    ).toEqual([]);
  });
});

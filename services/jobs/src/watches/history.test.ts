import { describe, expect, it } from 'vitest';
import { forgetBefore, prependSeen, seenAt } from './history.ts';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 11, 1);

describe('a watch’s seen videos with when they were found', () => {
  it('puts a run’s new videos first with their time, and keeps marks within what is kept', () => {
    const first = seenAt(['a', 'b', 'c'], NOW - 2 * DAY, 5);
    expect(first).toEqual({ seen: ['a', 'b', 'c'], marks: [{ at: NOW - 2 * DAY, count: 3 }] });
    const next = prependSeen(first.seen, first.marks, ['d', 'e', 'f'], NOW, 5);
    expect(next).toEqual({
      seen: ['d', 'e', 'f', 'a', 'b'],
      marks: [
        { at: NOW, count: 3 },
        { at: NOW - 2 * DAY, count: 2 },
      ],
    });
    expect(prependSeen(next.seen, next.marks, [], NOW + DAY, 5)).toEqual(next);
  });

  it('forgets what was found before the cutoff, the followed videos too, and says how many went', () => {
    const watch = {
      seen: ['new1', 'new2', 'old1', 'old2'],
      seen_marks: [
        { at: NOW, count: 2 },
        { at: NOW - 10 * DAY, count: 2 },
      ],
      pending: [
        { video_id: 'new1', first_seen: NOW, job_id: 'job_a' },
        { video_id: 'old1', first_seen: NOW - 10 * DAY, job_id: null },
      ],
      created_at: NOW - 30 * DAY,
    };
    expect(forgetBefore(watch, NOW - 3 * DAY)).toEqual({
      seen: ['new1', 'new2'],
      marks: [{ at: NOW, count: 2 }],
      pending: [{ video_id: 'new1', first_seen: NOW, job_id: 'job_a' }],
      removed: 3,
    });
    expect(forgetBefore(watch, NOW - 30 * DAY).removed).toBe(0);
    expect(forgetBefore(watch, NOW + 1)).toMatchObject({ seen: [], marks: [], pending: [], removed: 6 });
  });

  it('counts ids from before marks were kept as found when the watch was made', () => {
    const older = { seen: ['x', 'y'], created_at: NOW - 5 * DAY };
    expect(forgetBefore(older, NOW - 7 * DAY)).toMatchObject({ seen: ['x', 'y'], removed: 0 });
    expect(forgetBefore(older, NOW - 3 * DAY)).toMatchObject({ seen: [], removed: 2 });
    const mixed = { seen: ['n', 'x'], seen_marks: [{ at: NOW, count: 1 }], created_at: NOW - 5 * DAY };
    expect(forgetBefore(mixed, NOW - 3 * DAY)).toMatchObject({ seen: ['n'], removed: 1 });
  });
});

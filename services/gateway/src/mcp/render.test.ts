import { describe, expect, it } from 'vitest';
import { PAGE_CHARS, dedupeLines, readCursor, transcriptPage } from './render.ts';

const base = {
  title: 'A talk',
  channel: 'Chan',
  duration: 3_700,
  language: 'en',
  subtitleType: 'auto_generated',
  chapters: [],
  includeTimestamps: true,
  cursor: undefined,
} as const;

describe('transcript pages', () => {
  it('markdown: title, channel, chapters as headings, consecutive repeats dropped', () => {
    const page = transcriptPage({
      ...base,
      format: 'md',
      chapters: [
        { title: 'Outro', start_time: 60 },
        { title: 'Intro', start_time: 0 },
      ],
      segments: [
        { text: 'hello there', start: 0, duration: 2 },
        { text: 'Hello  there', start: 2, duration: 2 },
        { text: 'bye', start: 61, duration: 2 },
      ],
    });
    expect(page.text).toBe(
      [
        '# A talk',
        '**Channel:** Chan · **Duration:** 1:01:40 · **Language:** en (auto-generated)',
        '',
        '## Intro (0:00)',
        '',
        '[0:00] hello there',
        '',
        '## Outro (1:00)',
        '',
        '[1:01] bye',
      ].join('\n'),
    );
    expect(page.paging).toMatchObject({ cursor: '0', next_cursor: null, total_segments: 3 });
  });

  it('a long transcript comes in pages of at most about PAGE_CHARS that cover every segment once', () => {
    const segments = Array.from({ length: 3_000 }, (_, i) => ({
      text: `segment number ${i} ${'x'.repeat(30)}`,
      start: i * 2,
      duration: 2,
    }));
    const seen: number[] = [];
    let cursor: string | null | undefined;
    let pages = 0;
    do {
      const page = transcriptPage({ ...base, format: 'srt', segments, cursor });
      expect(page.text.length).toBeLessThan(PAGE_CHARS + 400);
      seen.push(...page.segments.map((s) => s.start / 2));
      cursor = page.paging.next_cursor;
      if (cursor !== null) expect(page.text).toContain(`cursor "${cursor}"`);
      pages += 1;
    } while (cursor !== null && pages < 100);
    expect(pages).toBeGreaterThan(3);
    expect(seen).toEqual(segments.map((_, i) => i));
  });

  it('a cursor that is not one of ours is INVALID_REQUEST', () => {
    for (const bad of ['x', '-1', '01', '1e3', '11', ' 1']) {
      expect(() => readCursor(bad, 10)).toThrow(expect.objectContaining({ code: 'INVALID_REQUEST' }));
    }
    expect(readCursor('10', 10)).toBe(10);
    expect(readCursor(undefined, 10)).toBe(0);
  });

  it('dedupeLines drops empty and repeated lines only when consecutive', () => {
    const lines = dedupeLines([
      { text: 'a', start: 0, duration: 1 },
      { text: ' A ', start: 1, duration: 1 },
      { text: '', start: 2, duration: 1 },
      { text: 'b', start: 3, duration: 1 },
      { text: 'a', start: 4, duration: 1 },
    ]);
    expect(lines.map((l) => l.text)).toEqual(['a', 'b', 'a']);
  });
});

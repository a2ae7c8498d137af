import { describe, expect, it } from 'vitest';
import { dayText, timeTag, utcText } from './dates.ts';

describe('dates', () => {
  it('reads as "26 Nov 2026, 14:03 UTC" with the ISO instant in <time datetime>', () => {
    expect(utcText('2026-11-26T14:03:59.123Z')).toBe('26 Nov 2026, 14:03 UTC');
    expect(utcText('2026-01-05T00:00:00Z')).toBe('5 Jan 2026, 00:00 UTC');
    expect(timeTag('2026-11-26T14:03:59.123Z').value).toBe(
      '<time datetime="2026-11-26T14:03:59.123Z">26 Nov 2026, 14:03 UTC</time>',
    );
    expect(dayText('2026-11-26')).toBe('26 Nov');
  });

  it('leaves a value that is not a date as it is (escaped)', () => {
    expect(utcText('')).toBe('');
    expect(timeTag('soon <b>').value).toBe('soon &lt;b&gt;');
    expect(dayText('not-a-day')).toBe('not-a-day');
  });
});

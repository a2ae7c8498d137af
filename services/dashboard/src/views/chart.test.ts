import { describe, expect, it } from 'vitest';
import { axisValue, stackedBarChart } from './chart.ts';
import type { UsageDay } from '../gateway/client.ts';

function days(n: number, requests: number): UsageDay[] {
  return Array.from({ length: n }, (_, i) => {
    const date = new Date(Date.UTC(2026, 10, 26) - (n - 1 - i) * 86_400_000).toISOString().slice(0, 10);
    return { date, requests, credits: 0, operations: { extract: { requests, credits: 0 } } };
  });
}

describe('usage chart labels', () => {
  it('writes axis values compactly (at most four characters)', () => {
    expect([0, 50, 1500, 10_000, 600_000, 2_000_000].map(axisValue)).toEqual([
      '0',
      '50',
      '1.5K',
      '10K',
      '600K',
      '2M',
    ]);
  });

  it('labels one day a week back from today, readable dates, the last one ending inside the chart', () => {
    const svg = stackedBarChart({ id: 'c', title: 't', days: days(30, 9_000), metric: 'requests' }).value;
    const labels = [
      ...svg.matchAll(/<text\s+x="([\d.]+)"\s+y="\d+"\s+text-anchor="(\w+)"[^>]*>([^<]+)<\/text/g),
    ];
    expect(labels.map((m) => m[3]!.trim())).toEqual(['29 Oct', '5 Nov', '12 Nov', '19 Nov', '26 Nov']);
    const last = labels.at(-1)!;
    expect(last[2]).toBe('end');
    expect(Number(last[1])).toBeLessThanOrEqual(640);
    // The largest axis value fits the left margin at the narrow screens' font size (22 units,
    // about 0.6 em a character).
    expect(svg).toContain('>10K</text');
    const axis = [...svg.matchAll(/<text x="([\d.]+)"[^>]*text-anchor="end"[^>]*>([^<]+)<\/text/g)];
    for (const [, x, text] of axis)
      expect(Number(x) - text!.trim().length * 0.6 * 22).toBeGreaterThanOrEqual(0);
  });
});

import { describe, expect, it } from 'vitest';
import { EgressQuarantine } from './quarantine.ts';

function fixture(count = 3) {
  let now = 1_000_000;
  const q = new EgressQuarantine({ count, quarantineMs: 300_000, clock: { now: () => now } });
  return { q, advance: (ms: number) => (now += ms) };
}

describe('EgressQuarantine', () => {
  it('uses the preferred egress while it is healthy', () => {
    const { q } = fixture();
    expect(q.pick(1)).toBe(1);
    q.record(1, 'ok');
    expect(q.pick(1)).toBe(1);
  });

  it('skips a flagged egress until its probe succeeds', () => {
    const { q, advance } = fixture();
    q.record(0, 'flagged');
    expect(q.isQuarantined(0)).toBe(true);
    expect(q.pick(0)).toBe(1);
    advance(299_999);
    expect(q.pick(0)).toBe(1);
    advance(1);
    expect(q.pick(0)).toBe(0); // the probe
    expect(q.pick(0)).toBe(1); // one probe at a time
    q.record(0, 'flagged'); // the probe failed: quarantined again
    advance(299_999);
    expect(q.pick(0)).toBe(1);
    advance(1);
    expect(q.pick(0)).toBe(0);
    q.record(0, 'ok');
    expect(q.isQuarantined(0)).toBe(false);
    expect(q.pick(0)).toBe(0);
    expect(q.quarantined()).toEqual([]);
  });

  it('answers about the video or the client do not move an egress', () => {
    const { q } = fixture();
    q.record(2, 'neutral');
    expect(q.pick(2)).toBe(2);
  });

  it('uses the preferred egress when every one is quarantined', () => {
    const { q } = fixture(2);
    q.record(0, 'flagged');
    q.record(1, 'flagged');
    expect(q.quarantined()).toEqual([0, 1]);
    expect(q.pick(1)).toBe(1);
  });
});

import { describe, expect, it } from 'vitest';
import { AdaptiveLadder } from './adaptive-ladder.ts';

const VISIONOS = { name: 'VISIONOS', version: '1.04' };
const ANDROID = { name: 'ANDROID', version: '21.26.364' };
const IOS = { name: 'IOS', version: '21.26.4' };
const BASE = [VISIONOS, ANDROID, IOS];
const names = (l: { name: string }[]) => l.map((c) => c.name);

function fixture() {
  let now = 1_000_000;
  const clock = { now: () => now };
  const ladder = new AdaptiveLadder({ retireAfter: 3, probeIntervalMs: 60_000, clock });
  return { ladder, advance: (ms: number) => (now += ms) };
}

describe('AdaptiveLadder', () => {
  it('keeps the configured order while every client answers', () => {
    const { ladder } = fixture();
    ladder.record(VISIONOS, 'ok');
    ladder.record(ANDROID, 'ok');
    expect(names(ladder.order(BASE))).toEqual(['VISIONOS', 'ANDROID', 'IOS']);
  });

  it('drops a refused client behind the healthy ones, then out after 3 refusals in a row', () => {
    const { ladder } = fixture();
    ladder.record(VISIONOS, 'client_failed');
    expect(names(ladder.order(BASE))).toEqual(['ANDROID', 'IOS', 'VISIONOS']);
    ladder.record(VISIONOS, 'client_failed');
    ladder.record(VISIONOS, 'client_failed');
    expect(ladder.isOut(VISIONOS)).toBe(true);
    expect(names(ladder.order(BASE))).toEqual(['ANDROID', 'IOS']);
  });

  it('probes an out client once per interval, and one success brings it back', () => {
    const { ladder, advance } = fixture();
    for (let i = 0; i < 3; i++) ladder.record(VISIONOS, 'client_failed');
    advance(59_999);
    expect(names(ladder.order(BASE))).toEqual(['ANDROID', 'IOS']);
    advance(1);
    expect(names(ladder.order(BASE))).toEqual(['VISIONOS', 'ANDROID', 'IOS']);
    // the probe is taken: a concurrent extract does not send a second one
    expect(names(ladder.order(BASE))).toEqual(['ANDROID', 'IOS']);
    ladder.record(VISIONOS, 'client_failed');
    advance(30_000);
    expect(names(ladder.order(BASE))).toEqual(['ANDROID', 'IOS']);
    advance(30_000);
    expect(names(ladder.order(BASE))).toEqual(['VISIONOS', 'ANDROID', 'IOS']);
    ladder.record(VISIONOS, 'ok');
    expect(ladder.isOut(VISIONOS)).toBe(false);
    expect(names(ladder.order(BASE))).toEqual(['VISIONOS', 'ANDROID', 'IOS']);
  });

  it('does not count video-specific or egress-level answers against a client', () => {
    const { ladder } = fixture();
    for (let i = 0; i < 10; i++) ladder.record(VISIONOS, 'neutral');
    expect(names(ladder.order(BASE))).toEqual(['VISIONOS', 'ANDROID', 'IOS']);
    expect(ladder.health()).toEqual([]);
  });

  it('tracks identities by version: a new version starts with a clean record', () => {
    const { ladder } = fixture();
    for (let i = 0; i < 3; i++) ladder.record(VISIONOS, 'client_failed');
    const next = { name: 'VISIONOS', version: '1.05' };
    expect(names(ladder.order([next, ANDROID, IOS]))).toEqual(['VISIONOS', 'ANDROID', 'IOS']);
  });

  it('asks everyone when every client is out rather than failing without trying', () => {
    const { ladder } = fixture();
    for (const c of BASE) for (let i = 0; i < 3; i++) ladder.record(c, 'client_failed');
    expect(names(ladder.order(BASE))).toEqual(['VISIONOS', 'ANDROID', 'IOS']);
  });

  it('adopts a candidate only after two successes in a row; one failure demotes it', () => {
    const { ladder } = fixture();
    const TV = { name: 'TVHTML5', version: '5.20260707' };
    expect(ladder.isAdopted(TV)).toBe(false);
    ladder.record(TV, 'ok');
    expect(ladder.isAdopted(TV)).toBe(false);
    // a failure in between starts the count again
    ladder.record(TV, 'client_failed');
    ladder.record(TV, 'ok');
    expect(ladder.isAdopted(TV)).toBe(false);
    ladder.record(TV, 'ok');
    expect(ladder.isAdopted(TV)).toBe(true);
    // neutral verdicts (a bot check on the egress) say nothing about it either way
    ladder.record(TV, 'neutral');
    expect(ladder.isAdopted(TV)).toBe(true);
    ladder.record(TV, 'client_failed');
    expect(ladder.isAdopted(TV)).toBe(false);
    // a new version is a new identity: unproven
    ladder.record(TV, 'ok');
    ladder.record(TV, 'ok');
    expect(ladder.isAdopted({ ...TV, version: '5.20261201' })).toBe(false);
    expect(ladder.health().find((h) => h.identity === 'TVHTML5@5.20260707')).toMatchObject({
      consecutiveOk: 2,
      okTotal: 5,
      failedTotal: 2,
    });
  });
});

import { describe, expect, it } from 'vitest';
import { CircuitBreaker } from './breaker.ts';
import type { BreakerState } from './observer.ts';

const config = { minBlocks: 3, ratio: 0.5, windowMs: 10_000, cooldownMs: 5_000 };

function setup() {
  let now = 1_000_000;
  const b = new CircuitBreaker(config, () => now);
  const states: BreakerState[] = [];
  b.onStateChange((s) => states.push(s));
  return { b, states, advance: (ms: number) => (now += ms) };
}

describe('circuit breaker', () => {
  it('stays closed below the block count or the block ratio', () => {
    const { b } = setup();
    b.record('bot_check', false);
    b.record('rate_limited', false);
    expect(b.state).toBe('closed');
    for (let i = 0; i < 10; i++) b.record('ok', false);
    b.record('bot_check', false); // 3 blocks of 13 answers: under half
    expect(b.state).toBe('closed');
  });

  it('opens past the threshold and answers UPSTREAM_BLOCKED cooling_down with Retry-After at once', () => {
    const { b, states, advance } = setup();
    for (let i = 0; i < 3; i++) b.record('bot_check', false);
    expect(states).toEqual(['open']);
    advance(1_200);
    let err: { code?: string; reason?: string; retryAfterSeconds?: number } | undefined;
    try {
      b.admit();
    } catch (e) {
      err = e as typeof err;
    }
    expect(err).toMatchObject({ code: 'UPSTREAM_BLOCKED', reason: 'cooling_down', retryAfterSeconds: 4 });
  });

  it('lets one probe through after the cool-down: ok closes it, a block opens it again', () => {
    const { b, states, advance } = setup();
    for (let i = 0; i < 3; i++) b.record('bot_check', false);
    advance(5_000);
    expect(b.state).toBe('half_open');
    const probe = b.admit();
    expect(probe.probe).toBe(true);
    expect(() => b.admit()).toThrow(/stop calling/); // only one probe at a time
    b.record('bot_check', true);
    expect(b.state).toBe('open');
    advance(5_000);
    b.record('ok', b.admit().probe);
    expect(states).toEqual(['open', 'half_open', 'open', 'half_open', 'closed']);
    expect(b.admit().probe).toBe(false);
  });

  it('forgets blocks older than the window', () => {
    const { b, advance } = setup();
    b.record('bot_check', false);
    b.record('bot_check', false);
    advance(11_000);
    b.record('bot_check', false);
    expect(b.state).toBe('closed');
  });
});

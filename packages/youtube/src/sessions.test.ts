import { describe, expect, it } from 'vitest';
import { SessionPool, type Session } from './sessions.ts';

function pool(size: number, rotateEvery: number, proxies = 0) {
  let n = 0;
  const booted: number[] = [];
  const p = new SessionPool({
    config: { size, rotateEvery, bootstrap: 'visitor_id' },
    proxies,
    bootstrap: async (s: Session) => {
      booted.push(s.id);
      return `visitor-${++n}`;
    },
  });
  return { p, booted };
}

describe('visitor session pool', () => {
  it('hands sessions out in turn and adopts the first visitorData an answer carries', () => {
    const { p } = pool(2, 10);
    const a = p.acquire();
    const b = p.acquire();
    expect(a).not.toBe(b);
    expect(p.acquire()).toBe(a);
    p.adopt(a, 'from-answer');
    p.adopt(a, 'later-answer');
    expect(a.visitorData).toBe('from-answer');
  });

  it('replaces a session after rotateEvery videos, with fresh visitor data fetched in the background', async () => {
    const { p, booted } = pool(1, 2);
    const first = p.acquire();
    expect(p.acquire()).toBe(first);
    const third = p.acquire();
    expect(third).not.toBe(first);
    expect(first.retired).toBe(true);
    await p.close();
    expect(booted).toEqual([third.id]);
    expect(third.visitorData).toBe('visitor-1');
  });

  it('a blocked session is replaced by one on the next proxy', async () => {
    const { p } = pool(2, 100, 3);
    const s = p.acquire();
    expect(s.proxy).toBe(0);
    const replacement = p.retire(s, 'bot_check');
    expect(replacement.proxy).toBe(1);
    expect(p.retire(s, 'again')).toBe(replacement);
    await p.close();
  });

  it('warmUp bootstraps every session and is bounded by its timeout', async () => {
    const { p } = pool(3, 100);
    await p.warmUp(1_000);
    expect(p.sessions.map((s) => s.visitorData)).toEqual(['visitor-1', 'visitor-2', 'visitor-3']);
    const slow = new SessionPool({
      config: { size: 1, rotateEvery: 1, bootstrap: 'visitor_id' },
      proxies: 0,
      bootstrap: () => new Promise(() => undefined),
    });
    const t = Date.now();
    await slow.warmUp(50);
    expect(Date.now() - t).toBeLessThan(2_000);
  });
});

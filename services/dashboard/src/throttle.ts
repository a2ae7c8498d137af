/**
 * Sign-in throttling per client IP and per email, with growing delays: after `free` failures in a
 * row, each further failure locks that IP or email for 1 s, 2 s, 4 s, ... up to 15 minutes. While
 * locked, sign-in answers 429 without checking the password (so guessing cannot go faster than the
 * delays). Counters live 24 h in the KeyValueStore (shared by replicas); a successful sign-in clears
 * the email's counter (not the IP's: one address may serve many people and many guesses).
 */
import { createHash } from 'node:crypto';
import type { KeyValueStore } from '@subx/ports';

const WINDOW_MS = 24 * 3_600_000;
const MAX_DELAY_MS = 15 * 60_000;

export interface ThrottleSubject {
  kind: 'ip' | 'email';
  value: string;
  /** Failures allowed before delays start. */
  free: number;
}

const digest = (s: ThrottleSubject) =>
  `${s.kind}:${createHash('sha256').update(s.value.toLowerCase()).digest('base64url')}`;

export function delayAfter(failures: number, free: number): number {
  if (failures <= free) return 0;
  return Math.min(MAX_DELAY_MS, 1_000 * 2 ** (failures - free - 1));
}

export interface SignInThrottle {
  /** Milliseconds until a sign-in may be tried again for any of the subjects; 0: now. */
  waitMs(subjects: ThrottleSubject[]): Promise<number>;
  failed(subjects: ThrottleSubject[]): Promise<void>;
  succeeded(subject: ThrottleSubject): Promise<void>;
}

export function createSignInThrottle(deps: { kv: KeyValueStore; now: () => number }): SignInThrottle {
  const { kv, now } = deps;
  return {
    async waitMs(subjects) {
      const ttls = await Promise.all(subjects.map((s) => kv.ttlMs(`dashboard:signin:lock:${digest(s)}`)));
      return Math.max(0, ...ttls.map((t) => t ?? 0));
    },
    async failed(subjects) {
      await Promise.all(
        subjects.map(async (s) => {
          const id = digest(s);
          const failures = await kv.increment(`dashboard:signin:fail:${id}`, 1, {
            expireAtMs: now() + WINDOW_MS,
          });
          const delay = delayAfter(failures, s.free);
          if (delay > 0) await kv.set(`dashboard:signin:lock:${id}`, String(failures), { ttlMs: delay });
        }),
      );
    },
    async succeeded(subject) {
      const id = digest(subject);
      await Promise.all([kv.delete(`dashboard:signin:fail:${id}`), kv.delete(`dashboard:signin:lock:${id}`)]);
    },
  };
}

/**
 * Sign-in throttling per client network (IPv4 address, IPv6 /64) and per email, with growing
 * delays: after `free` failures in a row, each further failure locks that subject for 1 s, 2 s,
 * 4 s, ... up to the subject's cap. While locked, sign-in answers 429 without checking the
 * password. Counters live 24 h in the KeyValueStore (shared by replicas).
 *
 * Race-free under concurrency: the attempt is counted *before* scrypt runs, and an
 * attempt past the free ones must first claim the subject's lock with SET NX, so at most one such
 * attempt per subject is in flight and a concurrent burst cannot all be checked. A successful
 * attempt undoes its count (and clears the email's counter, not the network's: one address may
 * serve many people and many guesses).
 *
 * The email's lock is capped short (EMAIL_MAX_DELAY_MS) so that someone else's failures cannot
 * keep the owner out for long; the per-network lock (15 min cap) is what slows a guesser down.
 */
import { createHash } from 'node:crypto';
import type { KeyValueStore } from '@subx/ports';
import { throttleNetwork } from './throttle-network.ts';

const WINDOW_MS = 24 * 3_600_000;
const NETWORK_MAX_DELAY_MS = 15 * 60_000;
const EMAIL_MAX_DELAY_MS = 60_000;

export interface ThrottleSubject {
  kind: 'ip' | 'email';
  /** The email, or the client's network (see throttle-network.ts). */
  value: string;
  /** Failures allowed before delays start. */
  free: number;
}

/** Failures in a row before delays start: a network is shared by many people, an address by one. */
const IP_FREE_FAILURES = 20;
export const EMAIL_FREE_FAILURES = 3;

/** What a password attempt (sign-in, operator step-up) from `ip` for `email` counts against. */
export function signInSubjects(ip: string, email: string | null): ThrottleSubject[] {
  return [
    { kind: 'ip', value: throttleNetwork(ip), free: IP_FREE_FAILURES },
    ...(email ? [{ kind: 'email' as const, value: email, free: EMAIL_FREE_FAILURES }] : []),
  ];
}

const digest = (s: ThrottleSubject) =>
  `${s.kind}:${createHash('sha256').update(s.value.toLowerCase()).digest('base64url')}`;
const failKey = (s: ThrottleSubject) => `dashboard:signin:fail:${digest(s)}`;
const lockKey = (s: ThrottleSubject) => `dashboard:signin:lock:${digest(s)}`;

export function delayAfter(failures: number, free: number, maxMs = NETWORK_MAX_DELAY_MS): number {
  if (failures <= free) return 0;
  return Math.min(maxMs, 1_000 * 2 ** Math.min(failures - free - 1, 30));
}

const maxDelayOf = (s: ThrottleSubject) => (s.kind === 'email' ? EMAIL_MAX_DELAY_MS : NETWORK_MAX_DELAY_MS);

/** An attempt that was let through: report its outcome exactly once. */
interface SignInAttempt {
  failed(): Promise<void>;
  succeeded(): Promise<void>;
}

type AttemptDecision = { allowed: true; attempt: SignInAttempt } | { allowed: false; waitMs: number };

export interface SignInThrottle {
  /** Counts an attempt for every subject, or refuses it (nothing counted) while one is locked. */
  begin(subjects: ThrottleSubject[]): Promise<AttemptDecision>;
  /** Forgets the email's failures (a password reset proved the owner). */
  clear(subject: ThrottleSubject): Promise<void>;
}

export function createSignInThrottle(deps: { kv: KeyValueStore; now: () => number }): SignInThrottle {
  const { kv, now } = deps;
  const waitOf = async (subjects: ThrottleSubject[]) => {
    const ttls = await Promise.all(subjects.map((s) => kv.ttlMs(lockKey(s))));
    return Math.max(0, ...ttls.map((t) => t ?? 0));
  };
  const clear = async (s: ThrottleSubject) => {
    await Promise.all([kv.delete(failKey(s)), kv.delete(lockKey(s))]);
  };

  return {
    clear,
    async begin(subjects) {
      // A cheap first look: a locked subject is refused without counting anything.
      const locked = await waitOf(subjects);
      if (locked > 0) return { allowed: false, waitMs: locked };

      const counted: { subject: ThrottleSubject; failures: number; holdsLock: boolean }[] = [];
      let refused = false;
      for (const subject of subjects) {
        const failures = await kv.increment(failKey(subject), 1, { expireAtMs: now() + WINDOW_MS });
        const delay = delayAfter(failures, subject.free, maxDelayOf(subject));
        // Past the free attempts, only the attempt that claims the lock goes on to scrypt; the
        // lock already covers the delay its failure would set.
        const holdsLock =
          delay > 0 && (await kv.setIfAbsent(lockKey(subject), String(failures), { ttlMs: delay }));
        counted.push({ subject, failures, holdsLock });
        if (delay > 0 && !holdsLock) {
          refused = true;
          break;
        }
      }
      if (refused) {
        // Undo this attempt everywhere: it was never checked.
        await Promise.all(
          counted.map(async (c) => {
            await kv.increment(failKey(c.subject), -1, { expireAtMs: now() + WINDOW_MS });
            if (c.holdsLock) await kv.delete(lockKey(c.subject));
          }),
        );
        return { allowed: false, waitMs: Math.max(1_000, await waitOf(subjects)) };
      }

      let settled = false;
      const settle = () => {
        if (settled) throw new Error('a sign-in attempt is reported once');
        settled = true;
      };
      return {
        allowed: true,
        attempt: {
          async failed() {
            settle();
            // The delay counts from the failure, not from the claim before scrypt.
            await Promise.all(
              counted.map(async (c) => {
                const delay = delayAfter(c.failures, c.subject.free, maxDelayOf(c.subject));
                if (delay > 0) await kv.set(lockKey(c.subject), String(c.failures), { ttlMs: delay });
              }),
            );
          },
          async succeeded() {
            settle();
            await Promise.all(
              counted.map(async (c) => {
                if (c.subject.kind === 'email') return clear(c.subject);
                await kv.increment(failKey(c.subject), -1, { expireAtMs: now() + WINDOW_MS });
                if (c.holdsLock) await kv.delete(lockKey(c.subject));
              }),
            );
          },
        },
      };
    },
  };
}

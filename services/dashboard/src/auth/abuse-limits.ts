/**
 * Limits that keep the sign-up and mail forms from being used as a weapon:
 * - sign-ups per client network (IPv4 address or IPv6 /64) per hour, checked before scrypt runs,
 *   so a flood of sign-ups cannot burn the CPU;
 * - mails per address: at most one of each kind per minute and MAILS_PER_HOUR per hour, so the
 *   forms cannot flood someone's inbox. The pages answer the same either way (no account oracle).
 * Windows of an hour from the first event of each subject, in the KeyValueStore (atomic, shared
 * by replicas).
 */
import { createHash } from 'node:crypto';
import type { KeyValueStore } from '@subx/ports';

const SIGN_UPS_PER_HOUR = 10;
const MAILS_PER_HOUR = 3;
const HOUR_MS = 3_600_000;
const MAIL_INTERVAL_MS = 60_000;

const hashOf = (value: string) => createHash('sha256').update(value.toLowerCase()).digest('base64url');

export interface AbuseLimits {
  /** Counts a sign-up from `network`; 0 when allowed, else milliseconds until the window ends. */
  signUpWaitMs(network: string): Promise<number>;
  /**
   * Claims one mail of `purpose` to `email`; false when the address had enough for now.
   * `replacing`: the mail replaces one whose link was just retired (a new sign-up for a pending
   * address), so the per-minute gate would leave the owner without a working link; the hourly
   * cap still holds.
   */
  mayMail(purpose: string, email: string, options?: { replacing?: boolean }): Promise<boolean>;
}

export function createAbuseLimits(deps: { kv: KeyValueStore; now: () => number }): AbuseLimits {
  const { kv, now } = deps;
  /** Counts one event of `subject` within its hour; 0 if allowed, else ms until the hour ends. */
  async function withinHour(subject: string, limit: number): Promise<number> {
    // The window starts at the subject's first event (SET NX), so every replica counts the same one.
    await kv.setIfAbsent(`${subject}:window`, String(now()), { ttlMs: HOUR_MS });
    const start = Number((await kv.get(`${subject}:window`)) ?? now());
    const end = start + HOUR_MS;
    const { applied } = await kv.incrementWithin(`${subject}:${start}`, 1, limit, { expireAtMs: end });
    return applied ? 0 : Math.max(1_000, end - now());
  }
  return {
    signUpWaitMs: (network) => withinHour(`dashboard:signup:${hashOf(network)}`, SIGN_UPS_PER_HOUR),
    async mayMail(purpose, email, options = {}) {
      const id = hashOf(email);
      const gate = `dashboard:mail:${purpose}:${id}`;
      if (options.replacing) await kv.set(gate, '1', { ttlMs: MAIL_INTERVAL_MS });
      else if (!(await kv.setIfAbsent(gate, '1', { ttlMs: MAIL_INTERVAL_MS }))) return false;
      return (await withinHour(`dashboard:mail-hour:${purpose}:${id}`, MAILS_PER_HOUR)) === 0;
    },
  };
}

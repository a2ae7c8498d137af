/**
 * Password hashing with node:crypto scrypt, memory-hard: N = 2^15 (configurable upwards), r = 8,
 * p = 3, 64-byte output, 16-byte random salt. That is one of OWASP's recommended scrypt settings
 * (Password Storage Cheat Sheet: N=2^15, r=8, p=3), about 32 MiB of memory per hash. The stored
 * string carries its parameters (`scrypt$N$r$p$salt$hash`, base64url), so raising N later keeps old
 * hashes verifiable; `needsRehash` tells sign-in to upgrade them.
 */
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import type { ScryptOptions } from 'node:crypto';

const R = 8;
const P = 3;
const KEY_LENGTH = 64;
/** Inputs longer than this are refused before hashing (scrypt of megabytes is a cheap DoS). */
export const MAX_PASSWORD_LENGTH = 256;
export const MIN_PASSWORD_LENGTH = 10;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  // maxmem must cover 128 * N * r * p bytes plus overhead, or scrypt refuses large N.
  const maxmem = 128 * (options.N ?? 0) * (options.r ?? R) * (options.p ?? P) + 16 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, { ...options, maxmem }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

export async function hashPassword(password: string, n: number): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, { N: n, r: R, p: P });
  return `scrypt$${n}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

const FORMAT = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const match = FORMAT.exec(stored);
  if (!match) return false;
  const [, n, r, p, salt, hash] = match;
  const expected = Buffer.from(hash!, 'base64url');
  const key = await derive(password, Buffer.from(salt!, 'base64url'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

export function needsRehash(stored: string, n: number): boolean {
  const match = FORMAT.exec(stored);
  return !match || Number(match[1]) < n || Number(match[2]) !== R || Number(match[3]) !== P;
}

/** A hash of a random password, verified against when the email is unknown (same timing). */
export async function decoyHash(n: number): Promise<string> {
  return hashPassword(randomBytes(16).toString('hex'), n);
}

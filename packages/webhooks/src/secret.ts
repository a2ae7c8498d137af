import { randomBytes } from 'node:crypto';

/** Standard Webhooks secrets are `whsec_` and base64 of the key; 32 random bytes as Svix issues. */
export const SIGNING_SECRET_PREFIX = 'whsec_';

export function generateSigningSecret(): string {
  return SIGNING_SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** A secret this package issued (or one of the same form): prefix, then 24 to 64 bytes of base64. */
export function isSigningSecret(value: string): boolean {
  if (!value.startsWith(SIGNING_SECRET_PREFIX)) return false;
  const key = value.slice(SIGNING_SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(key)) return false;
  const bytes = Buffer.from(key, 'base64').length;
  return bytes >= 24 && bytes <= 64;
}

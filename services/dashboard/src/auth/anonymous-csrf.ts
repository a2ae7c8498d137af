/**
 * CSRF protection for visitors without a session (sign-in, sign-up, forgot, reset, verify forms):
 * a signed double-submit token, so that an anonymous page view writes nothing to the store
 *. The token is `nonce.HMAC(key, nonce)`; it travels in an HttpOnly cookie and in the
 * form, and a POST is accepted only when both carry the same correctly signed token. Another site
 * can make a browser send the cookie but cannot read it to put it in the form; the signature keeps
 * a cookie planted through a sibling subdomain from being accepted (and `__Host-` keeps it out
 * under TLS).
 *
 * The key is derived from the admin token, a secret every replica already shares, so any replica
 * accepts a form rendered by another. While the admin token is rotated (ADMIN_TOKEN_PREVIOUS), forms
 * signed under the previous one are accepted too, so no open form breaks mid-rotation.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const TOKEN_PATTERN = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

export interface AnonymousCsrf {
  mint(): string;
  /** Whether `token` is one we signed (a cookie worth keeping). */
  isSigned(token: unknown): token is string;
  /** The form's token equals the cookie's, and is one we signed. */
  matches(cookieToken: unknown, formToken: unknown): boolean;
}

export function createAnonymousCsrf(secret: string, previousSecret?: string): AnonymousCsrf {
  const keyOf = (s: string) => createHmac('sha256', s).update('subx dashboard anonymous CSRF v1').digest();
  const keys = [keyOf(secret), ...(previousSecret ? [keyOf(previousSecret)] : [])];
  const signWith = (key: Buffer, nonce: string) =>
    createHmac('sha256', key).update(nonce).digest('base64url');
  const sign = (nonce: string) => signWith(keys[0]!, nonce);
  const same = (a: string, b: string) => {
    const x = Buffer.from(a);
    const y = Buffer.from(b);
    return x.length === y.length && timingSafeEqual(x, y);
  };
  const isSigned = (token: unknown): token is string => {
    const match = typeof token === 'string' ? TOKEN_PATTERN.exec(token) : null;
    return match !== null && keys.map((key) => same(signWith(key, match[1]!), match[2]!)).includes(true);
  };
  return {
    mint() {
      const nonce = randomBytes(16).toString('base64url');
      return `${nonce}.${sign(nonce)}`;
    },
    isSigned,
    matches: (cookieToken, formToken) =>
      isSigned(cookieToken) && typeof formToken === 'string' && same(cookieToken, formToken),
  };
}

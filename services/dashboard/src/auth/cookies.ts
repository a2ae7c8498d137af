/**
 * The dashboard's cookies and when they are `Secure`.
 *
 * The rule (services/dashboard/README.md "Security"): cookies are Secure when COOKIE_SECURE=always,
 * when DASHBOARD_PUBLIC_URL is https (the browser talks TLS to the ingress even if the pod sees
 * plain HTTP), or when the request itself came over TLS (X-Forwarded-Proto believed only from
 * TRUST_PROXY). Only plain HTTP without an https public URL (e.g. `npm start` on localhost) gets
 * cookies without Secure. Secure cookies carry the `__Host-` prefix, which browsers accept only
 * with Secure, Path=/ and no Domain, so a sibling subdomain cannot plant or shadow them; a plain
 * name is never read in Secure mode.
 */
import type { FastifyRequest } from 'fastify';
import type { DashboardConfig } from '../config.ts';

export const SESSION_COOKIE = 'subx_sid';
export const SECURE_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`;
export const CSRF_COOKIE = 'subx_csrf';
export const SECURE_CSRF_COOKIE = `__Host-${CSRF_COOKIE}`;

export interface CookieNames {
  secure: boolean;
  session: string;
  csrf: string;
}

export function cookiePolicy(
  config: Pick<DashboardConfig, 'COOKIE_SECURE' | 'DASHBOARD_PUBLIC_URL'>,
): (request: FastifyRequest) => CookieNames {
  const alwaysSecure =
    config.COOKIE_SECURE === 'always' || (config.DASHBOARD_PUBLIC_URL?.startsWith('https:') ?? false);
  return (request) => {
    // request.protocol believes X-Forwarded-Proto only from TRUST_PROXY addresses.
    const secure = alwaysSecure || request.protocol === 'https';
    return secure
      ? { secure, session: SECURE_SESSION_COOKIE, csrf: SECURE_CSRF_COOKIE }
      : { secure, session: SESSION_COOKIE, csrf: CSRF_COOKIE };
  };
}

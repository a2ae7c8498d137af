/**
 * TRUST_PROXY, one parser for every HTTP service (gateway, dashboard): which proxies' X-Forwarded-For
 * (and -Proto) are believed. fastify's `trustProxy` takes the result as it is.
 *
 *   unset, "false", "0"          → false: the client is the socket's peer.
 *   an integer n from 1 to 16    → n hops: the n-th address from the right of X-Forwarded-For
 *                                  (one ingress in front: 1).
 *   "10.0.0.0/8, 192.0.2.7, ..." → the listed proxies (IPs, CIDRs, or proxy-addr's names
 *                                  loopback / linklocal / uniquelocal).
 *
 * "true" is refused: trusting every hop lets any client pick its address (and so its per-IP limit
 * bucket) by sending X-Forwarded-For itself.
 */
import ipaddr from 'ipaddr.js';
import { z } from 'zod';

/** proxy-addr's named ranges, accepted beside addresses and CIDRs. */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isAddressOrCidr(item: string): boolean {
  if (NAMED_RANGES.has(item)) return true;
  if (item.includes('/')) {
    try {
      ipaddr.parseCIDR(item);
      return true;
    } catch {
      return false;
    }
  }
  return ipaddr.isValid(item);
}

/** More proxies in a row than this is a typo, not a topology. */
const MAX_HOPS = 16;

/**
 * What fastify's `trustProxy` option gets. A hop count is a function: fastify (since 5.12) turns a
 * plain number into "trust nothing", since a count cannot tell a proxy from a client that reached
 * the port directly. Use a count only where the port is reachable through the proxies alone (the
 * chart's NetworkPolicy); list the proxies' CIDRs otherwise.
 */
export type TrustProxy = false | string[] | ((address: string, hop: number) => boolean);

/** Trusts the `hops` nearest addresses (the socket's peer is hop 0). */
function trustHops(hops: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < hops;
}

const TRUST_PROXY_HELP =
  'must be false, a hop count (1, 2, ...) or a comma-separated list of proxy IPs/CIDRs ("true" would let clients choose their address)';

/** A comma-separated list of proxy IPs/CIDRs; an empty value is none. → string[]. */
export const trustedProxyList = z.string().transform((value, ctx) => {
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
  // The value names network addresses, not secrets: echoing the bad item helps the operator.
  const bad = items.filter((item) => !isAddressOrCidr(item));
  if (bad.length > 0) {
    ctx.addIssue({
      code: 'custom',
      message: `must list IP addresses or CIDRs; not one: ${bad.map((b) => JSON.stringify(b.slice(0, 60))).join(', ')}`,
    });
    return z.NEVER;
  }
  return items;
});

/** TRUST_PROXY: false | hop count | proxy list (see the top of this file). */
export const trustProxyEnv = z.string().transform((value, ctx): TrustProxy => {
  const v = value.trim();
  if (v === '' || v === 'false' || v === '0') return false;
  if (/^\d+$/.test(v) && Number(v) <= MAX_HOPS) return trustHops(Number(v));
  if (v === 'true' || /^\d+$/.test(v)) {
    ctx.addIssue({ code: 'custom', message: TRUST_PROXY_HELP });
    return z.NEVER;
  }
  const list = trustedProxyList.safeParse(v);
  if (!list.success) {
    ctx.addIssue({ code: 'custom', message: `${TRUST_PROXY_HELP}; ${list.error.issues[0]?.message ?? ''}` });
    return z.NEVER;
  }
  return list.data;
});

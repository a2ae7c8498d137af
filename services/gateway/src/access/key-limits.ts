/**
 * What a named key may do beyond naming its account: its scopes, when it expires and the networks
 * it may be used from. The account's primary key has no limits (every scope, no expiry, from
 * anywhere). Checked on every call, cached key or not, in the order 401 (expired) → 403
 * SOURCE_NOT_ALLOWED → 403 INSUFFICIENT_SCOPE, before the tier and the daily limit.
 */
import { BlockList, isIP } from 'node:net';
import type { ApiKeyScope } from '@subx/contracts/access';
import type { Account } from '@subx/credits';
import { Errors } from '@subx/errors';

export interface KeyLimits {
  scopes: ReadonlySet<ApiKeyScope>;
  /** Epoch ms, or null: never. */
  expiresAtMs: number | null;
  /** null: from anywhere. */
  allowedNetworks: BlockList | null;
}

/** The account a key names, with its limits when it is a named key. */
export interface KeyHolder extends Account {
  limits?: KeyLimits;
}

/** A CIDR as `[address, prefix, family]`, or null when it is not one (a bare address is a /32 or /128). */
export function parseCidr(text: string): [string, number, 'ipv4' | 'ipv6'] | null {
  const [address = '', prefixText, extra] = text.trim().split('/');
  if (extra !== undefined) return null;
  const version = isIP(address);
  if (version === 0) return null;
  const max = version === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return null;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (prefix > max) return null;
  return [address, prefix, version === 4 ? 'ipv4' : 'ipv6'];
}

/** The BlockList of a key's CIDRs (each already checked by parseCidr), or null for none. */
export function networksOf(cidrs: readonly string[] | null | undefined): BlockList | null {
  if (!cidrs || cidrs.length === 0) return null;
  const list = new BlockList();
  for (const cidr of cidrs) {
    const parsed = parseCidr(cidr);
    if (parsed) list.addSubnet(...parsed);
  }
  return list;
}

/** Whether `ip` (as fastify reports it, IPv4-mapped IPv6 included) is inside `networks`. */
function isFromNetworks(networks: BlockList, ip: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  const address = mapped ? mapped[1]! : ip;
  const version = isIP(address);
  if (version === 0) return false;
  return networks.check(address, version === 4 ? 'ipv4' : 'ipv6');
}

export type KeyRefusal =
  { kind: 'source'; error: Error } | { kind: 'scope'; error: Error; scope: ApiKeyScope };

/**
 * Throws 401 for an expired key; answers the 403 refusal (outside the key's networks, or without
 * the scope) for the caller to record and throw; null when the key may make the call. A null
 * scope checks the expiry and the networks only (MCP's handshake: each tool call is its route's).
 */
export function refusalOf(
  holder: KeyHolder,
  need: { scope: ApiKeyScope | null; sourceIp: string | undefined },
  nowMs: number,
): KeyRefusal | null {
  const limits = holder.limits;
  if (!limits) return null;
  if (limits.expiresAtMs !== null && nowMs >= limits.expiresAtMs)
    throw Errors.keyExpired(new Date(limits.expiresAtMs).toISOString());
  if (limits.allowedNetworks && !isFromNetworks(limits.allowedNetworks, need.sourceIp ?? '')) {
    return { kind: 'source', error: Errors.sourceNotAllowed(need.sourceIp ?? 'an unknown address') };
  }
  if (need.scope !== null && !limits.scopes.has(need.scope)) {
    return { kind: 'scope', error: Errors.insufficientScope(need.scope), scope: need.scope };
  }
  return null;
}

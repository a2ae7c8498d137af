/**
 * The fake gateway's named keys and audit log (support.ts builds the fake with them): the rules the
 * gateway's admin API enforces, so a route test through the fake tells what the real one answers —
 * a blank name, no scope, a past or too distant expiry or a network that is not a CIDR is 400
 * INVALID_REQUEST with the gateway's message; the 51st active key and the primary key's revocation
 * are 400 INVALID_REQUEST; an unknown key is 404. Every change is an event of the account's audit log,
 * newest first, paged by a cursor (here the next index).
 */
import { randomBytes } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import { API_KEY_SCOPES, MAX_KEY_CIDRS, MAX_NAMED_KEYS } from '@subx/contracts/access';
import type { ApiKeyInfo, AuditEventView, GatewayAccount, GatewayClient } from '../src/gateway/client.ts';
import { GatewayError } from '../src/gateway/client.ts';

const MAX_KEY_LIFETIME_MS = 5 * 366 * 24 * 3600 * 1000;

type KeyMethods = Pick<GatewayClient, 'listKeys' | 'createKey' | 'revokeNamedKey' | 'auditPage'>;

const invalid = (message: string) => new GatewayError(400, 'INVALID_REQUEST', message);

/** The gateway's id for a primary key made before keys had ids (accounts.ts, `keyIdOf`). */
export const primaryKeyId = (account: GatewayAccount) => `key_made_${account.key.created_at}`;

export function fakeNamedKeys(accountOf: (id: string) => GatewayAccount) {
  /** Per account, oldest first, as the gateway stores them (the secret itself is never kept). */
  const named = new Map<string, ApiKeyInfo[]>();
  /** Per account, oldest first; pages read them newest first. */
  const events = new Map<string, AuditEventView[]>();
  /** Who made each named key (a dashboard user id), as the gateway's `created_by`. */
  const makers = new Map<string, string>();

  const record = (accountId: string, event: Omit<AuditEventView, 'id' | 'at' | 'account_id'>) => {
    const list = events.get(accountId) ?? [];
    list.push({
      id: `aud_${randomBytes(8).toString('hex')}`,
      at: new Date().toISOString(),
      account_id: accountId,
      ...event,
    });
    events.set(accountId, list);
  };

  const withStatus = (key: ApiKeyInfo): ApiKeyInfo =>
    key.status === 'active' && key.expires_at !== null && Date.parse(key.expires_at) <= Date.now()
      ? { ...key, status: 'expired' }
      : { ...key };

  const checkedExpiry = (value: string | null | undefined): string | null => {
    if (value === null || value === undefined) return null;
    const at = Date.parse(value);
    if (!Number.isFinite(at)) throw invalid('expires_at: not a date-time.');
    if (at <= Date.now()) throw invalid('expires_at: must be in the future.');
    if (at - Date.now() > MAX_KEY_LIFETIME_MS) throw invalid('expires_at: at most 5 years ahead.');
    return new Date(at).toISOString();
  };

  const checkedCidrs = (cidrs: readonly string[] | null | undefined): string[] | null => {
    if (!cidrs || cidrs.length === 0) return null;
    if (cidrs.length > MAX_KEY_CIDRS)
      throw invalid(`body/allowed_cidrs must NOT have more than ${MAX_KEY_CIDRS} items`);
    return cidrs.map((cidr) => {
      try {
        const [address, bits] = ipaddr.parseCIDR(cidr);
        return `${address.toString()}/${bits}`;
      } catch {
        throw invalid(
          `allowed_cidrs: "${cidr}" is not an IPv4 or IPv6 network (e.g. 203.0.113.0/24 or 2001:db8::/32).`,
        );
      }
    });
  };

  const methods: KeyMethods = {
    async listKeys(id) {
      const a = accountOf(id);
      const primary: ApiKeyInfo = {
        id: primaryKeyId(a),
        name: 'primary',
        primary: true,
        scopes: [...API_KEY_SCOPES],
        prefix: a.key.prefix,
        last4: a.key.last4,
        status: a.key.status,
        created_at: a.key.created_at,
        expires_at: null,
        allowed_cidrs: null,
        last_used_at: null,
      };
      return [primary, ...(named.get(id) ?? []).map(withStatus)];
    },

    async createKey(id, body, memberId) {
      accountOf(id);
      const scopes = API_KEY_SCOPES.filter((s) => body.scopes.includes(s));
      if (body.scopes.some((s) => !(API_KEY_SCOPES as readonly string[]).includes(s))) {
        throw invalid('body/scopes/0 must be equal to one of the allowed values');
      }
      if (scopes.length === 0) throw invalid('scopes: name at least one scope.');
      const name = body.name.trim();
      if (name.length === 0) throw invalid('name: must not be blank.');
      if (body.name.length > 100) throw invalid('body/name must NOT have more than 100 characters');
      const expiresAt = checkedExpiry(body.expires_at);
      const allowedCidrs = checkedCidrs(body.allowed_cidrs);
      const list = named.get(id) ?? [];
      if (list.filter((k) => k.status === 'active').length >= MAX_NAMED_KEYS) {
        throw new GatewayError(
          400,
          'INVALID_REQUEST',
          `The account has ${MAX_NAMED_KEYS} active keys, the most it may hold; revoke one first.`,
        );
      }
      const apiKey = `sxk_v1_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'a').slice(0, 32)}`;
      const info: ApiKeyInfo = {
        id: `key_${randomBytes(12).toString('hex')}`,
        name,
        primary: false,
        scopes,
        prefix: 'sxk_v1_',
        last4: apiKey.slice(-4),
        status: 'active',
        created_at: new Date().toISOString(),
        expires_at: expiresAt,
        allowed_cidrs: allowedCidrs,
        last_used_at: null,
      };
      list.push(info);
      named.set(id, list);
      makers.set(info.id, memberId);
      record(id, {
        action: 'key.created',
        actor: { type: 'member', id: memberId },
        target: { type: 'key', id: info.id },
        source_ip: '127.0.0.1',
        details: { name, scopes, expires_at: expiresAt, allowed_cidrs: allowedCidrs },
      });
      return { ...structuredClone(info), api_key: apiKey };
    },

    async revokeNamedKey(id, keyId, memberId) {
      const a = accountOf(id);
      if (keyId === primaryKeyId(a)) {
        throw new GatewayError(
          400,
          'INVALID_REQUEST',
          'The primary key is replaced or revoked from the dashboard or the admin API, not here.',
        );
      }
      const key = (named.get(id) ?? []).find((k) => k.id === keyId);
      if (!key) throw new GatewayError(404, 'NOT_FOUND', 'The account has no key with this id.');
      key.status = 'revoked';
      record(id, {
        action: 'key.revoked',
        actor: { type: 'member', id: memberId },
        target: { type: 'key', id: keyId },
        source_ip: '127.0.0.1',
        details: { name: key.name },
      });
      return withStatus(key);
    },

    async auditPage(id, page) {
      accountOf(id);
      const newestFirst = [...(events.get(id) ?? [])].reverse();
      const start = page.cursor === undefined ? 0 : Number(page.cursor);
      if (!Number.isInteger(start) || start < 0) throw invalid('cursor: not a cursor of this log.');
      const next = start + page.limit < newestFirst.length ? String(start + page.limit) : null;
      return { events: structuredClone(newestFirst.slice(start, start + page.limit)), next_cursor: next };
    },
  };
  /** What securing the account does to its named keys: every active one revoked; their ids. */
  const revokeAll = (id: string): string[] =>
    (named.get(id) ?? [])
      .filter((k) => k.status === 'active')
      .map((k) => {
        k.status = 'revoked';
        return k.id;
      });
  return { methods, named, events, record, revokeAll, makers };
}

/**
 * What the gateway notes of a key's calls: each key's last use (to the minute: a store write per
 * call would double the store's load) and, in the audit log, the calls its limits refused (once
 * a minute per key, refusal and address, so that a client looping on a 403 cannot flood the log).
 * Neither is ever awaited by the request.
 */
import type { Clock, Logger } from '@subx/ports';
import type { AuditLog } from '../domain/audit-log.ts';
import type { AccountRepository } from './accounts.ts';
import type { KeyUseObserver } from './access-control.ts';
import type { NamedKeys } from './named-keys.ts';

const WINDOW_MS = 60_000;
const MAX_REMEMBERED = 10_000;

/**
 * `first(id)`: true the first time an id is seen in a window. Bounded by forgetting everything
 * past its cap (an id is then let through once more, which is harmless here).
 */
function oncePerWindow(clock: Clock, windowMs: number): (id: string) => boolean {
  const seen = new Map<string, number>();
  return (id) => {
    const nowMs = clock.now();
    const last = seen.get(id);
    if (last !== undefined && nowMs - last < windowMs) return false;
    if (seen.size >= MAX_REMEMBERED) seen.clear();
    seen.set(id, nowMs);
    return true;
  };
}

export function createKeyUseObserver(deps: {
  clock: Clock;
  logger: Logger;
  accounts: Pick<AccountRepository, 'collection'>;
  namedKeys: Pick<NamedKeys, 'noteUse'>;
  audit?: AuditLog;
}): KeyUseObserver {
  const { clock, logger, accounts, namedKeys, audit } = deps;
  const firstUse = oncePerWindow(clock, WINDOW_MS);
  const firstRefusal = oncePerWindow(clock, WINDOW_MS);
  const nowIso = () => new Date(clock.now()).toISOString();

  function noteFailed(err: unknown) {
    logger.warn({ err }, "could not note a key's last use");
  }

  return {
    used(holder) {
      if (!holder.keyId || !firstUse(holder.keyId)) return;
      if (holder.limits) namedKeys.noteUse(holder.keyId, nowIso()).catch(noteFailed);
      else
        accounts.collection
          .updateOne({ _id: holder.id, 'key.status': 'active' }, { $set: { 'key.last_used_at': nowIso() } })
          .catch(noteFailed);
    },
    refused(holder, refusal, call) {
      if (!audit) return;
      const scope = refusal.kind === 'scope' ? refusal.scope : null;
      if (!firstRefusal(`${holder.keyId}\n${refusal.kind}\n${scope}\n${call.sourceIp}`)) return;
      void audit.record({
        accountId: holder.id,
        action: refusal.kind === 'scope' ? 'scope.refused' : 'source.refused',
        actor: { type: 'key', id: holder.keyId ?? null },
        sourceIp: call.sourceIp ?? null,
        details: { required_scope: call.scope, reason: refusal.kind },
      });
    },
  };
}

/**
 * A workspace's data retention (docs/api.md, "Data retention"): the settings stored on the account
 * document (`retention`, absent: every default), read and changed by `/api/v1/account/retention`
 * and its admin twin, every change recorded in the audit log. The tier's caps and the check of a
 * change are `@subx/contracts/retention`'s; the job service reads the settings from the same
 * document and applies them to what it stores (services/jobs/src/retention).
 */
import {
  RETENTION_CAPS,
  RETENTION_FIELDS,
  effectiveRetention,
  retentionProblem,
  type RetentionChange,
  type RetentionSettings,
} from '@subx/contracts/retention';
import { Errors } from '@subx/errors';
import type { Clock } from '@subx/ports';
import type { AuditActor, AuditLog } from '../domain/audit-log.ts';
import type { AccountDoc, AccountRepository } from './accounts.ts';

/** Who changes the settings, and from where (the audit log's actor and address). */
export interface RetentionChanger {
  actor: AuditActor;
  sourceIp: string | null;
}

export interface AccountRetention {
  /** The settings in force with the tier's caps; null for an unknown account. */
  get(accountId: string): Promise<RetentionSettings | null>;
  /**
   * Sets (days), resets (null) or leaves (absent) each field; a value outside 1..the tier's cap is
   * 400 INVALID_REQUEST naming the field and the cap. The whole settings afterwards; null for an
   * unknown account.
   */
  update(accountId: string, change: RetentionChange, by: RetentionChanger): Promise<RetentionSettings | null>;
}

/** The settings as the routes answer them. */
function retentionView(doc: Pick<AccountDoc, '_id' | 'tier' | 'retention'>): RetentionSettings {
  return {
    account_id: doc._id,
    tier: doc.tier,
    ...effectiveRetention(doc.tier, doc.retention),
    caps: { ...RETENTION_CAPS[doc.tier] },
    updated_at: doc.retention ? new Date(doc.retention.changed_at).toISOString() : null,
  };
}

export function createAccountRetention(deps: {
  accounts: Pick<AccountRepository, 'get' | 'collection'>;
  clock: Clock;
  audit?: AuditLog;
}): AccountRetention {
  const { accounts, clock, audit } = deps;

  return {
    async get(accountId) {
      const doc = await accounts.get(accountId);
      return doc ? retentionView(doc) : null;
    },

    async update(accountId, change, by) {
      const before = await accounts.get(accountId);
      if (!before) return null;
      const problem = retentionProblem(before.tier, change);
      if (problem) throw Errors.invalidRequest(problem.message, { field: problem.field, max: problem.max });
      const now = clock.now();
      const set: Record<string, unknown> = {
        'retention.changed_at': now,
        updated_at: new Date(now).toISOString(),
      };
      const unset: Record<string, ''> = {};
      const fields = RETENTION_FIELDS.filter((field) => change[field] !== undefined);
      for (const field of fields) {
        const days = change[field];
        if (days === null) unset[`retention.${field}`] = '';
        else set[`retention.${field}`] = days;
      }
      const after = await accounts.collection.findOneAndUpdate(
        { _id: before._id },
        Object.keys(unset).length > 0 ? { $set: set, $unset: unset } : { $set: set },
        { returnDocument: 'after' },
      );
      if (!after) return null;
      const previous = effectiveRetention(before.tier, before.retention);
      const current = effectiveRetention(after.tier, after.retention);
      await audit?.record({
        accountId: after._id,
        action: 'retention.changed',
        actor: by.actor,
        target: { type: 'account', id: after._id },
        sourceIp: by.sourceIp,
        details: {
          fields,
          ...Object.fromEntries(fields.map((field) => [field, current[field]])),
          ...Object.fromEntries(fields.map((field) => [`previous_${field}`, previous[field]])),
        },
      });
      return retentionView(after);
    },
  };
}

import type { AuditPage } from '@subx/contracts/audit';

/**
 * What the rest of the gateway needs from the audit log: one call per change or refusal worth
 * knowing later (who, what, when, from where). `audit/` implements it.
 */
export type AuditAction =
  | 'key.created'
  | 'key.revoked'
  /** A call refused because its key lacks the operation's scope. */
  | 'scope.refused'
  /** A call refused because it came from outside the key's allowed networks. */
  | 'source.refused'
  /** The account's primary key replaced (admin API, dashboard): the previous one stops at once. */
  | 'key.regenerated'
  | 'webhook_secret.rotated'
  | 'watch.created'
  | 'watch.deleted'
  /** A watch paused after a compromise, resumed. */
  | 'watch.resumed'
  /** An operator changed the tier or the balance (details: the fields changed). */
  | 'account.updated'
  /** The account's data taken out whole (GET /api/v1/account/export, the primary key only). */
  | 'account.exported'
  /** A person joined the workspace (an accepted invitation), changed role, was removed. */
  | 'member.added'
  | 'member.role_changed'
  | 'member.removed'
  /** Reported by the dashboard (admin API): an invitation sent or withdrawn (details: role, e-mail). */
  | 'member.invited'
  | 'invitation.withdrawn'
  /** The workspace's data retention changed (details: the fields, their new and previous days). */
  | 'retention.changed'
  /** Reported by the dashboard (admin API): a member signed in, failed to, reset the password. */
  | 'sign_in.succeeded'
  | 'sign_in.failed'
  | 'password.reset';

export interface AuditActor {
  /** `key`: an API key (id); `operator`: the admin token; `member`: a dashboard user (id). */
  type: 'key' | 'operator' | 'member';
  id: string | null;
}

export interface AuditInput {
  accountId: string;
  action: AuditAction;
  actor: AuditActor;
  /** What was acted on, e.g. `{ type: 'key', id: 'key_…' }`. */
  target?: { type: string; id: string };
  /** The caller's address as the gateway saw it. */
  sourceIp?: string | null;
  /**
   * Non-secret facts: scopes, names, the refused operation. Never a key, token or secret: the
   * audit log stores what callers pass as it is, so callers pass ids and names only.
   */
  details?: Record<string, string | number | boolean | null | readonly string[]>;
}

export interface AuditLog {
  /** Records one event. Never throws: a failure is logged and counted, the action stands. */
  record(input: AuditInput): Promise<void>;
}

export interface AuditListOptions {
  /** 1..200, default 50. */
  limit?: number;
  /** `next_cursor` of the previous page. */
  cursor?: string | null;
}

/** GET /api/v1/audit and its admin twin: one account's events. */
export interface AuditReader {
  /** One page of the account's events, newest first; an unreadable cursor is 400 INVALID_REQUEST. */
  list(accountId: string, options?: AuditListOptions): Promise<AuditPage>;
}

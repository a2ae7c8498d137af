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
  | 'source.refused';

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
  /** Non-secret facts: scopes, names, the refused operation. Never a key, token or secret. */
  details?: Record<string, string | number | boolean | null | readonly string[]>;
}

export interface AuditLog {
  /** Records one event. Never throws: a failure is logged and counted, the action stands. */
  record(input: AuditInput): Promise<void>;
}

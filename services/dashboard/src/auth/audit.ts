/**
 * Audit events: every operator grant and every operator action, as one structured log line each
 * with `audit: true` (the field a log pipeline filters on), the event name, who did it, and which
 * account it touched. Identifiers only: never a password, key, token or session id.
 */
import type { Logger } from '@subx/ports';

type AuditEvent =
  /** Someone got the operator role: promotion API, or an OPERATOR_EMAILS match on a confirmed account. */
  | 'operator.granted'
  /** The promotion API took the role away. */
  | 'operator.revoked'
  /** An operator re-entered their password (step-up before operator actions). */
  | 'operator.reauthenticated'
  | 'operator.account_updated'
  | 'operator.key_revoked'
  /** A person chose a new password through a reset link; their sessions ended, their key was replaced. */
  | 'account.password_reset'
  /** A person deleted their workspace, confirmed from their mailbox; everyone in it was left without one. */
  | 'account.workspace_deleted';

/** Who acted: a person (email and user id) or the holder of the admin token. */
type AuditActor = { email: string; user_id: string } | { admin_token: true } | { config: string };

interface AuditRecord {
  actor: AuditActor;
  /** The account acted on: a dashboard user, a gateway account, or both. */
  target?: { email?: string; user_id?: string; account_id?: string };
  /** What changed (non-secret values only). */
  details?: Record<string, string | number | boolean>;
}

export type AuditLog = (event: AuditEvent, record: AuditRecord) => void;

export function createAuditLog(logger: Logger): AuditLog {
  return (event, record) => {
    logger.info({ audit: true, event, ...record }, `audit ${event}`);
  };
}

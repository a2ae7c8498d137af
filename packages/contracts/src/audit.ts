/**
 * The audit log as JSON Schemas written once: the gateway validates with them and serves them in
 * both OpenAPI documents (the public `GET /api/v1/audit`, the admin API's per-account twins), and
 * the dashboard's client takes its types from them. Import it as `@subx/contracts/audit`.
 */
import type { FromSchema } from 'json-schema-to-ts';
import { WORKSPACE_ROLES } from './workspaces.ts';

/** Events per page: `limit` of the audit routes. */
export const AUDIT_PAGE_LIMIT = { min: 1, max: 200, default: 50 } as const;

/** How long events are kept unless AUDIT_RETENTION_DAYS says otherwise. */
export const DEFAULT_AUDIT_RETENTION_DAYS = 365;

/**
 * What the dashboard reports through the admin API (POST /admin/v1/accounts/{id}/audit): the
 * events only it sees. The gateway records every other action itself.
 */
export const MEMBER_AUDIT_ACTIONS = [
  'sign_in.succeeded',
  'sign_in.failed',
  'password.reset',
  'member.invited',
  'invitation.withdrawn',
] as const;
export type MemberAuditAction = (typeof MEMBER_AUDIT_ACTIONS)[number];

const ACTIONS_DESCRIPTION =
  'What happened: `key.created`, `key.regenerated`, `key.revoked`, `scope.refused`, `source.refused`, `webhook_secret.rotated`, `watch.created`, `watch.deleted`, `watch.resumed`, `account.updated`, `account.exported`, `retention.changed`, `member.added`, `member.role_changed`, `member.removed`, `member.invited`, `invitation.withdrawn`, `sign_in.succeeded`, `sign_in.failed`, `password.reset`. New actions may appear: ignore the ones you do not know.';

export const auditQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: {
      type: 'integer',
      minimum: AUDIT_PAGE_LIMIT.min,
      maximum: AUDIT_PAGE_LIMIT.max,
      default: AUDIT_PAGE_LIMIT.default,
      description: 'Events per page, 1 to 200.',
    },
    cursor: { type: 'string', maxLength: 512, description: '`next_cursor` of the previous page.' },
  },
} as const;
export type AuditQuery = FromSchema<typeof auditQuerySchema>;

export const auditEventSchema = {
  type: 'object',
  required: ['id', 'at', 'account_id', 'action', 'actor', 'target', 'source_ip', 'details'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', description: 'The event id (`aud_…`), also `ce_id` on the `audit.v1` topic.' },
    at: { type: 'string', format: 'date-time', description: 'When it happened.' },
    account_id: { type: 'string' },
    action: { type: 'string', description: ACTIONS_DESCRIPTION },
    actor: {
      type: 'object',
      required: ['type', 'id'],
      additionalProperties: false,
      description: 'Who did it.',
      properties: {
        type: {
          type: 'string',
          enum: ['key', 'operator', 'member'],
          description: '`key`: an API key; `operator`: the admin API; `member`: a dashboard user.',
        },
        id: { type: ['string', 'null'], description: 'The key id or the member id; null for the operator.' },
      },
    },
    target: {
      type: ['object', 'null'],
      required: ['type', 'id'],
      additionalProperties: false,
      description: 'What was acted on (`{ "type": "key", "id": "key_…" }`); null when nothing was.',
      properties: { type: { type: 'string' }, id: { type: 'string' } },
    },
    source_ip: {
      type: ['string', 'null'],
      description: 'The caller’s address as the gateway (or the dashboard) saw it; null when unknown.',
    },
    details: {
      type: 'object',
      description:
        'Non-secret facts of the action: scopes, names, the refused operation. Never a key or a secret.',
      additionalProperties: {
        anyOf: [
          { type: ['string', 'number', 'boolean', 'null'] },
          { type: 'array', items: { type: 'string' } },
        ],
      },
    },
  },
} as const;
export type AuditEventView = FromSchema<typeof auditEventSchema>;

export const auditPageSchema = {
  type: 'object',
  required: ['events', 'next_cursor'],
  additionalProperties: false,
  properties: {
    events: { type: 'array', items: auditEventSchema, description: 'Newest first.' },
    next_cursor: {
      type: ['string', 'null'],
      description: 'Pass as `cursor` for the next page; null on the last.',
    },
  },
} as const;
export type AuditPage = FromSchema<typeof auditPageSchema>;

/** The dashboard's report of an event only it sees (admin API). */
export const recordAuditBodySchema = {
  type: 'object',
  required: ['action'],
  additionalProperties: false,
  properties: {
    action: { type: 'string', enum: MEMBER_AUDIT_ACTIONS, description: 'What the member did.' },
    member_id: {
      type: ['string', 'null'],
      maxLength: 64,
      description: 'The dashboard user (their id, never their e-mail); null when unknown (a failed sign-in).',
    },
    source_ip: {
      type: ['string', 'null'],
      maxLength: 45,
      description: 'The person’s address as the dashboard saw it (IPv4 or IPv6).',
    },
    invitation: {
      type: 'object',
      required: ['id', 'email', 'role'],
      additionalProperties: false,
      description:
        'For `member.invited` and `invitation.withdrawn`: which invitation, to whom, for which role.',
      properties: {
        id: { type: 'string', pattern: '^inv_[0-9a-f]{24}$' },
        email: { type: 'string', maxLength: 254 },
        role: { type: 'string', enum: WORKSPACE_ROLES },
      },
    },
  },
} as const;
export type RecordAuditBody = FromSchema<typeof recordAuditBodySchema>;

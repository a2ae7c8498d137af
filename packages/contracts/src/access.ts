/**
 * API keys with scopes, and the audit log, as JSON Schemas written once: the gateway validates
 * with them and serves them in both OpenAPI documents (the public `/api/v1/keys` and
 * `/api/v1/audit`, the admin API's per-account twins), and the dashboard's client takes its types
 * from them. Import it as `@subx/contracts/access`.
 */
import type { FromSchema } from 'json-schema-to-ts';

/**
 * What a key may do. Every authenticated operation names the one scope it needs (the gateway's
 * operation table); a key made by sign-up, by the admin API or by `npm start` has all of them.
 */
export const API_KEY_SCOPES = [
  'transcripts:read',
  'ai',
  'jobs',
  'webhooks:admin',
  'account:read',
  'keys:admin',
] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** What each scope lets a key do, in a line (the dashboard shows them beside its checkboxes). */
export const API_KEY_SCOPE_DESCRIPTIONS: Readonly<Record<ApiKeyScope, string>> = {
  'transcripts:read': 'extract, batch, playlist, validate, search and comments: reading videos.',
  ai: 'summarize and comment analyses: model work, paid in credits.',
  jobs: 'bulk jobs and watches: creating, reading, canceling.',
  'webhooks:admin': 'the webhook signing secret: reading and rotating it.',
  'account:read': "the account's balance, tier and limits.",
  'keys:admin': "the account's keys and its audit log.",
};

export function isApiKeyScope(value: unknown): value is ApiKeyScope {
  return typeof value === 'string' && (API_KEY_SCOPES as readonly string[]).includes(value);
}

/** Keys an account may hold at once besides its primary key. */
export const MAX_NAMED_KEYS = 50;
/** Source networks one key may name. */
export const MAX_KEY_CIDRS = 20;

const dateTime = { type: 'string', format: 'date-time' } as const;
const scopesSchema = {
  type: 'array',
  minItems: 1,
  maxItems: API_KEY_SCOPES.length,
  uniqueItems: true,
  items: { type: 'string', enum: API_KEY_SCOPES },
  description:
    'What the key may do: `transcripts:read` (extract, batch, playlist, validate, search, comments), `ai` (summarize, comment analyses), `jobs` (jobs and watches), `webhooks:admin` (the webhook signing secret), `account:read` (balance, tier, limits), `keys:admin` (keys and the audit log).',
} as const;

export const keyIdParamsSchema = {
  type: 'object',
  required: ['key_id'],
  additionalProperties: false,
  properties: {
    // No pattern: an id that is not one of the account's keys is 404 NOT_FOUND, whatever its form.
    key_id: { type: 'string', maxLength: 64, description: 'The key id (`key_…`).' },
  },
} as const;

export const createApiKeyBodySchema = {
  type: 'object',
  required: ['name', 'scopes'],
  additionalProperties: false,
  properties: {
    name: {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      description: 'What the key is for (shown in lists and in the audit log).',
    },
    scopes: scopesSchema,
    expires_at: {
      type: ['string', 'null'],
      // A pattern, not `format`: the request validators know no formats (RFC 3339 date-time).
      pattern:
        '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})$',
      description:
        'When the key stops working (401 UNAUTHORIZED after it); in the future, at most 5 years ahead. Null or absent: it does not expire.',
    },
    allowed_cidrs: {
      type: ['array', 'null'],
      maxItems: MAX_KEY_CIDRS,
      uniqueItems: true,
      items: { type: 'string', maxLength: 49 },
      description:
        'The source networks the key may be used from, IPv4 or IPv6 CIDR (`203.0.113.0/24`, `2001:db8::/32`); a call from anywhere else is 403 SOURCE_NOT_ALLOWED. Null or absent: from anywhere.',
    },
  },
} as const;
export type CreateApiKeyBody = FromSchema<typeof createApiKeyBodySchema>;

export const apiKeyInfoSchema = {
  type: 'object',
  required: [
    'id',
    'name',
    'primary',
    'scopes',
    'prefix',
    'last4',
    'status',
    'created_at',
    'expires_at',
    'allowed_cidrs',
    'last_used_at',
  ],
  additionalProperties: false,
  properties: {
    id: { type: 'string', description: 'The key id (`key_…`); not secret.' },
    name: { type: 'string' },
    primary: {
      type: 'boolean',
      description:
        "The account's primary key (made by sign-up or the admin API, every scope): replaced or revoked by the dashboard and the admin API only.",
    },
    scopes: { type: 'array', items: { type: 'string', enum: API_KEY_SCOPES } },
    prefix: { type: 'string', description: 'The key starts with this.' },
    last4: { type: 'string', description: 'The key ends with these four characters.' },
    status: { type: 'string', enum: ['active', 'expired', 'revoked'] },
    created_at: dateTime,
    expires_at: { type: ['string', 'null'], format: 'date-time' },
    allowed_cidrs: { type: ['array', 'null'], items: { type: 'string' } },
    last_used_at: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'The last admitted call with this key, to the minute; null if none yet.',
    },
  },
} as const;
export type ApiKeyInfo = FromSchema<typeof apiKeyInfoSchema>;

export const apiKeyListSchema = {
  type: 'object',
  required: ['keys'],
  additionalProperties: false,
  properties: {
    keys: { type: 'array', items: apiKeyInfoSchema, description: 'The primary key first, then by creation.' },
  },
} as const;
export type ApiKeyList = FromSchema<typeof apiKeyListSchema>;

export const createdApiKeySchema = {
  type: 'object',
  required: [...apiKeyInfoSchema.required, 'api_key'],
  additionalProperties: false,
  properties: {
    ...apiKeyInfoSchema.properties,
    api_key: { type: 'string', description: 'The key itself, shown in this response only.' },
  },
} as const;
export type CreatedApiKey = FromSchema<typeof createdApiKeySchema>;

export const accountKeyParamsSchema = {
  type: 'object',
  required: ['id', 'key_id'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', description: 'The account id (`acct_` and 32 hex digits).' },
    key_id: keyIdParamsSchema.properties.key_id,
  },
} as const;

/** The admin API's key changes: who asked, when it is a dashboard user (the audit log's actor). */
export const actingMemberQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    member_id: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      description: 'The dashboard user making the change; absent: the operator holding the admin token.',
    },
  },
} as const;
export type ActingMemberQuery = FromSchema<typeof actingMemberQuerySchema>;

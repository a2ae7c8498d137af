/**
 * The gateway's admin API (/admin/v1 on its admin listener) as JSON Schemas, written once: the
 * gateway validates requests with them and serves them in its admin /openapi.json
 * (services/gateway/src/admin/operations.ts), and the dashboard's client takes its types
 * from them (`FromSchema`), so neither side writes the shapes by hand. Only keywords that mean the
 * same in draft-07 (ajv, fastify) and 2020-12 (OpenAPI 3.1) are used. Import it as
 * `@subx/contracts/admin-api`: the package's main entry would load the generated gRPC code.
 */
import type { FromSchema } from 'json-schema-to-ts';

/** The account tiers (the gateway's pricing table has one row per tier). */
export const ACCOUNT_TIERS = ['free', 'pro', 'business', 'enterprise'] as const;
export type AccountTier = (typeof ACCOUNT_TIERS)[number];

const tierSchema = { type: 'string', enum: ACCOUNT_TIERS, description: 'The account tier.' } as const;
const dateTime = { type: 'string', format: 'date-time' } as const;
/** A non-negative whole number of credits (within the numbers JSON and JavaScript keep exactly). */
const creditsSchema = { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER } as const;
const date = {
  type: 'string',
  pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$',
  description: 'A UTC date, YYYY-MM-DD.',
} as const;

// Requests

export const accountIdParamsSchema = {
  type: 'object',
  required: ['id'],
  additionalProperties: false,
  properties: {
    // No pattern: an id that is not an account's is 404 NOT_FOUND, whatever its form.
    id: { type: 'string', description: 'The account id (`acct_` and 32 hex digits).' },
  },
} as const;

export const accountWatchParamsSchema = {
  type: 'object',
  required: ['id', 'watch_id'],
  additionalProperties: false,
  properties: {
    id: accountIdParamsSchema.properties.id,
    // No pattern either: an id that is not one of the account's watches is 404 NOT_FOUND.
    watch_id: { type: 'string', maxLength: 64, description: 'The watch id (`wat_…`).' },
  },
} as const;

export const createAccountBodySchema = {
  type: 'object',
  required: ['tier'],
  additionalProperties: false,
  properties: {
    tier: tierSchema,
    credits: { ...creditsSchema, description: "The starting balance; default the tier's monthly allowance." },
    email: {
      type: ['string', 'null'],
      maxLength: 254,
      pattern: '^[^\\s@]+@[^\\s@]+$',
      description: 'Who the account belongs to (an e-mail address), or null.',
    },
  },
} as const;
export type CreateAccountBody = FromSchema<typeof createAccountBodySchema>;

export const updateAccountBodySchema = {
  type: 'object',
  additionalProperties: false,
  description:
    '`credits` SETS the balance, `add_credits` ADDS to it: send one of them, not both (400 INVALID_REQUEST). A tier change counts on the next request on every replica.',
  properties: {
    tier: tierSchema,
    credits: { ...creditsSchema, description: 'The new balance.' },
    add_credits: { ...creditsSchema, description: 'Credits to add to the balance.' },
  },
} as const;
export type UpdateAccountBody = FromSchema<typeof updateAccountBodySchema>;

export const usageQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    from: { ...date, description: 'First day (inclusive, UTC); default 29 days before `to`.' },
    to: { ...date, description: 'Last day (inclusive, UTC); default today. At most 366 days in all.' },
  },
} as const;

export const jobsQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: '1 to 100.' },
    cursor: { type: 'string', maxLength: 512, description: 'next_cursor of the previous page.' },
  },
} as const;

/** The public operations the playground may call on an account's behalf. */
export const PLAYGROUND_PATHS = ['/api/v1/extract', '/api/v1/validate'] as const;

export const callBodySchema = {
  type: 'object',
  required: ['path'],
  additionalProperties: false,
  properties: {
    path: { type: 'string', enum: PLAYGROUND_PATHS, description: 'The public operation to call.' },
    body: { description: 'The JSON body of the call (extract).' },
    query: {
      type: 'object',
      additionalProperties: { type: 'string' },
      description: 'The query string of the call (validate: `{ url }`).',
    },
    client_ip: {
      type: 'string',
      maxLength: 45,
      description:
        "The person's IP address (IPv4 or IPv6): validate's per-IP limit then applies to them, not the dashboard.",
    },
  },
} as const;
export type CallBody = FromSchema<typeof callBodySchema>;

// Responses

export const createdAccountSchema = {
  type: 'object',
  required: ['account_id', 'tier', 'credits', 'api_key', 'created_at'],
  additionalProperties: false,
  properties: {
    account_id: { type: 'string' },
    tier: tierSchema,
    credits: { type: 'integer' },
    api_key: { type: 'string', description: 'The key, shown this once (`sxk_v1_` + 32 letters and digits).' },
    created_at: dateTime,
  },
} as const;
export type CreatedAccount = FromSchema<typeof createdAccountSchema>;

export const accountSchema = {
  type: 'object',
  required: ['account_id', 'tier', 'credits', 'email', 'created_at', 'key', 'usage'],
  additionalProperties: false,
  properties: {
    account_id: { type: 'string' },
    tier: tierSchema,
    credits: { type: 'integer', description: 'The available balance.' },
    email: { type: ['string', 'null'] },
    created_at: dateTime,
    key: {
      type: 'object',
      description: 'The key without its secret part.',
      required: ['prefix', 'last4', 'created_at', 'status'],
      additionalProperties: false,
      properties: {
        prefix: { type: 'string' },
        last4: { type: 'string' },
        created_at: dateTime,
        status: { type: 'string', enum: ['active', 'revoked'] },
      },
    },
    usage: {
      type: 'object',
      required: ['today_requests', 'month_credits'],
      additionalProperties: false,
      properties: {
        today_requests: { type: 'integer', description: 'Requests counted today (UTC).' },
        month_credits: { type: 'integer', description: 'Credits charged this month (UTC).' },
      },
    },
  },
} as const;
export type Account = FromSchema<typeof accountSchema>;

export const apiKeySchema = {
  type: 'object',
  required: ['api_key'],
  additionalProperties: false,
  properties: { api_key: { type: 'string', description: 'The new key, shown this once.' } },
} as const;
export type IssuedKey = FromSchema<typeof apiKeySchema>;

export const secureAccountBodySchema = {
  type: 'object',
  required: ['key'],
  additionalProperties: false,
  properties: {
    key: {
      type: 'string',
      enum: ['replace', 'revoke'],
      description:
        '`replace`: an active key is replaced by a new one, shown in this response only (a password reset); `revoke`: it is revoked (an operator). A key already revoked stays so either way.',
    },
  },
} as const;
export type SecureAccountBody = FromSchema<typeof secureAccountBodySchema>;

export const securedAccountSchema = {
  type: 'object',
  required: ['api_key', 'webhook_secret_rotated', 'paused_watches', 'canceled_jobs', 'revoked_keys'],
  additionalProperties: false,
  properties: {
    api_key: {
      type: ['string', 'null'],
      description: 'The new key, shown this once; null when no key was issued.',
    },
    webhook_secret_rotated: {
      type: 'boolean',
      description: 'The webhook signing secret was replaced, and no older secret signs any more.',
    },
    paused_watches: {
      type: 'array',
      items: { type: 'string' },
      description: 'The watches the old key created, paused until the owner resumes them.',
    },
    canceled_jobs: {
      type: 'array',
      items: { type: 'string' },
      description: 'The queued and running jobs the old key created, canceled.',
    },
    revoked_keys: {
      type: 'array',
      items: { type: 'string' },
      description:
        "The account's named keys, all revoked (whoever held the account could have made them); the watches and jobs each created are paused and canceled as the primary key's are.",
    },
  },
} as const;
export type SecuredAccount = FromSchema<typeof securedAccountSchema>;

export const accountLimitsSchema = {
  type: 'object',
  required: ['account_id', 'tier', 'daily', 'credits', 'operations'],
  additionalProperties: false,
  properties: {
    account_id: { type: 'string' },
    tier: tierSchema,
    daily: {
      type: 'object',
      description: 'The daily request limit; `limit` and `remaining` are null for unlimited tiers.',
      required: ['limit', 'used', 'remaining', 'reset_at'],
      additionalProperties: false,
      properties: {
        limit: { type: ['integer', 'null'] },
        used: { type: 'integer' },
        remaining: { type: ['integer', 'null'] },
        reset_at: dateTime,
      },
    },
    credits: {
      type: 'object',
      required: ['balance', 'monthly_allowance'],
      additionalProperties: false,
      properties: { balance: { type: 'integer' }, monthly_allowance: { type: 'integer' } },
    },
    operations: {
      type: 'object',
      description:
        "Per metered operation: the lowest tier that may call it, and whether this account's tier may (the dashboard explains `TIER_REQUIRED` before it happens).",
      additionalProperties: {
        type: 'object',
        required: ['minimum_tier', 'allowed'],
        additionalProperties: false,
        properties: { minimum_tier: tierSchema, allowed: { type: 'boolean' } },
      },
    },
  },
} as const;
export type AccountLimits = FromSchema<typeof accountLimitsSchema>;

const requestsAndCredits = {
  type: 'object',
  required: ['requests', 'credits'],
  additionalProperties: false,
  properties: { requests: { type: 'integer' }, credits: { type: 'integer' } },
} as const;

const usageDaySchema = {
  type: 'object',
  required: ['date', 'requests', 'credits', 'operations'],
  additionalProperties: false,
  properties: {
    date: { type: 'string', description: 'YYYY-MM-DD (UTC).' },
    requests: { type: 'integer' },
    credits: { type: 'integer' },
    operations: {
      type: 'object',
      description: 'Per metered operation (extract, summarize, …), zeros included.',
      additionalProperties: requestsAndCredits,
    },
  },
} as const;
export type UsageDay = FromSchema<typeof usageDaySchema>;

export const accountUsageSchema = {
  type: 'object',
  required: ['account_id', 'from', 'to', 'days', 'total_requests', 'total_credits'],
  additionalProperties: false,
  properties: {
    account_id: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    days: { type: 'array', items: usageDaySchema, description: 'Every day from `from` to `to`.' },
    total_requests: { type: 'integer' },
    total_credits: { type: 'integer' },
  },
} as const;
export type AccountUsage = FromSchema<typeof accountUsageSchema>;

export const callResultSchema = {
  type: 'object',
  required: ['status', 'headers', 'body'],
  additionalProperties: false,
  properties: {
    status: { type: 'integer', description: "The public API's status." },
    headers: {
      type: 'object',
      additionalProperties: { type: 'string' },
      description: 'Content-Type, X-Request-Id, the X-RateLimit-* headers and Retry-After, when present.',
    },
    body: { description: 'The JSON body (parsed), or the text of a document.' },
  },
} as const;
export type CallResult = FromSchema<typeof callResultSchema>;

/** The signing secret, as the webhook secret routes of the public API and of the admin API answer it. */
export const webhookSecretSchema = {
  type: 'object',
  required: ['secret', 'created_at', 'previous_secret_expires_at'],
  additionalProperties: false,
  properties: {
    secret: {
      type: 'string',
      pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
      description: 'The Standard Webhooks secret: `whsec_` and the base64 of 32 random bytes.',
    },
    created_at: { ...dateTime, description: 'When this secret was issued.' },
    previous_secret_expires_at: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'Until when the previous secret also signs deliveries; null when there is none.',
    },
  },
} as const;
export type WebhookSecret = FromSchema<typeof webhookSecretSchema>;

/**
 * A job as the admin list shows it: the job object of the public API (GET /api/v1/jobs), of which
 * the fields below are the ones the admin API promises; the public reference describes the rest.
 */
const jobSummarySchema = {
  type: 'object',
  required: ['job_id', 'status', 'source', 'progress', 'credits_charged', 'created_at', 'finished_at'],
  properties: {
    job_id: { type: 'string' },
    status: { type: 'string', description: 'queued, running, completed, failed or canceled.' },
    source: {
      type: 'object',
      required: ['type'],
      properties: { type: { type: 'string', description: 'urls, playlist, channel or search.' } },
    },
    progress: {
      type: 'object',
      required: ['total', 'succeeded', 'failed', 'pending'],
      properties: {
        total: { type: ['integer', 'null'] },
        succeeded: { type: 'integer' },
        failed: { type: 'integer' },
        pending: { type: ['integer', 'null'] },
      },
    },
    credits_charged: { type: 'integer' },
    created_at: dateTime,
    finished_at: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;
export type JobSummary = FromSchema<typeof jobSummarySchema>;

export const jobsPageSchema = {
  type: 'object',
  required: ['jobs', 'next_cursor'],
  additionalProperties: false,
  properties: {
    jobs: { type: 'array', items: jobSummarySchema, description: 'Newest first.' },
    next_cursor: {
      type: ['string', 'null'],
      description: 'Pass as `cursor` for the next page; null on the last.',
    },
  },
} as const;
export type JobsPage = FromSchema<typeof jobsPageSchema>;

/**
 * A watch as the admin list shows it: the watch object of the public API (GET /api/v1/watches), of
 * which the fields below are the ones the admin API promises; the public reference describes the rest.
 */
const watchSummarySchema = {
  type: 'object',
  required: [
    'watch_id',
    'source',
    'interval_minutes',
    'webhook_url',
    'created_at',
    'next_run_at',
    'runs',
    'last_run',
  ],
  properties: {
    watch_id: { type: 'string' },
    source: {
      type: 'object',
      required: ['type'],
      properties: {
        type: { type: 'string', description: 'channel, playlist or search.' },
        url: { type: 'string', description: 'The channel or playlist URL.' },
        query: { type: 'string', description: 'The search query.' },
      },
    },
    interval_minutes: { type: 'integer' },
    webhook_url: { type: ['string', 'null'] },
    created_at: dateTime,
    next_run_at: dateTime,
    runs: { type: 'integer' },
    paused: {
      type: ['object', 'null'],
      description:
        'Set while the watch does not run: `key_compromised` when the key that created it was revoked after a password reset or by an operator. Resume it to run it again.',
      required: ['at', 'reason'],
      properties: { at: dateTime, reason: { type: 'string', enum: ['key_compromised'] } },
    },
    last_run: {
      type: ['object', 'null'],
      required: ['at', 'new_videos', 'job_id', 'error'],
      properties: {
        at: dateTime,
        new_videos: { type: 'integer', description: 'New videos the run found (its job took them).' },
        job_id: { type: ['string', 'null'] },
        error: {
          type: ['object', 'null'],
          required: ['code', 'message'],
          properties: { code: { type: 'string' }, message: { type: 'string' } },
        },
      },
    },
  },
} as const;
export type WatchSummary = FromSchema<typeof watchSummarySchema>;

export const watchListSchema = {
  type: 'object',
  required: ['watches'],
  additionalProperties: false,
  properties: {
    watches: { type: 'array', items: watchSummarySchema, description: 'Newest first.' },
  },
} as const;
export type WatchList = FromSchema<typeof watchListSchema>;

/** One watch (the answer of resuming it). */
export const watchSchema = watchSummarySchema;

export const watchDeletedSchema = {
  type: 'object',
  required: ['watch_id', 'deleted'],
  additionalProperties: false,
  properties: { watch_id: { type: 'string' }, deleted: { type: 'boolean', const: true } },
} as const;

const deletedCount = { type: 'integer', minimum: 0 } as const;

/** The answer of deleting a workspace (DELETE /admin/v1/accounts/{id}): what went, per kind. */
export const accountDeletedSchema = {
  type: 'object',
  required: ['account_id', 'requested_at', 'deleted_at', 'removed', 'canceled_jobs'],
  additionalProperties: false,
  properties: {
    account_id: { type: 'string' },
    requested_at: {
      ...dateTime,
      description: 'When the deletion began: every key of the workspace was refused from then on.',
    },
    deleted_at: {
      ...dateTime,
      description: 'When the gateway and the job service held nothing of it any more.',
    },
    removed: {
      type: 'object',
      description:
        'Documents and entries deleted by this call, per kind (a repeated call after a failed one counts what it found left).',
      required: [
        'account',
        'api_keys',
        'jobs',
        'job_results',
        'watches',
        'webhook_secrets',
        'webhook_deliveries',
        'audit_events',
        'workspace_members',
        'daily_requests',
        'cache_entries',
      ],
      additionalProperties: false,
      properties: {
        account: deletedCount,
        api_keys: { ...deletedCount, description: 'The primary key and the named keys.' },
        jobs: deletedCount,
        job_results: deletedCount,
        watches: deletedCount,
        webhook_secrets: deletedCount,
        webhook_deliveries: deletedCount,
        audit_events: deletedCount,
        workspace_members: deletedCount,
        daily_requests: { ...deletedCount, description: 'Per-day request counts.' },
        cache_entries: {
          ...deletedCount,
          description: 'Key-value entries keyed by the workspace: idempotency records, counters.',
        },
      },
    },
    canceled_jobs: { ...deletedCount, description: 'Jobs that were queued or running, canceled first.' },
  },
} as const;
export type AccountDeleted = FromSchema<typeof accountDeletedSchema>;

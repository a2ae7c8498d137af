/**
 * The calling key's own account (GET /api/v1/account): tier, balance, today's requests against the
 * daily limit, what the tier may call and its job limits, so a pipeline can budget a job before it
 * meets a 402 or a 429. Account-only: free, counted against the free reads' per-minute limit.
 * Spread into OPERATION_SPECS (openapi/operations.ts).
 */
import { GATED_CAPABILITIES } from '../access/capabilities.ts';
import { METERED_OPERATIONS, TIERS } from '@subx/credits';
import type { OperationSpec } from '../domain/operation-spec.ts';

const tierSchema = { type: 'string', enum: [...TIERS] };

/** One operation's entry in `operations` (one object for all, named once in the reference). */
const operationAccessSchema = {
  type: 'object',
  required: ['minimum_tier', 'allowed'],
  additionalProperties: false,
  properties: { minimum_tier: tierSchema, allowed: { type: 'boolean' } },
};

const accountSchema = {
  type: 'object',
  required: [
    'account_id',
    'tier',
    'credits_balance',
    'monthly_allowance',
    'daily_limit',
    'daily_used',
    'daily_remaining',
    'resets_at',
    'operations',
    'jobs',
    'transcription',
    'request_id',
  ],
  additionalProperties: false,
  properties: {
    account_id: { type: 'string' },
    tier: tierSchema,
    credits_balance: {
      type: 'integer',
      minimum: 0,
      description: 'Credits available now (open reservations already taken off).',
    },
    monthly_allowance: {
      type: 'integer',
      minimum: 0,
      description: 'Credits the tier is granted at the start of each UTC month.',
    },
    daily_limit: {
      type: ['integer', 'null'],
      description: 'Requests per UTC day; null: unlimited.',
    },
    daily_used: { type: 'integer', minimum: 0, description: 'Requests counted today (UTC).' },
    daily_remaining: {
      type: ['integer', 'null'],
      description: 'Requests left today; null: unlimited.',
    },
    resets_at: {
      type: 'string',
      format: 'date-time',
      description: 'When the daily count starts again (next 00:00 UTC).',
    },
    operations: {
      type: 'object',
      description:
        'Per operation, and per capability gated inside one (`watches`, `transcription`: `mode` auto or transcribe, `translation_by_model`, `embeddings`: extract with `embed`): the lowest tier that may use it and whether this key’s tier may.',
      required: [...METERED_OPERATIONS, ...GATED_CAPABILITIES],
      additionalProperties: false,
      properties: Object.fromEntries(
        [...METERED_OPERATIONS, ...GATED_CAPABILITIES].map((operation) => [operation, operationAccessSchema]),
      ),
    },
    jobs: {
      type: 'object',
      description: 'Bulk job limits of the tier (POST /api/v1/jobs); 0: the tier has no jobs.',
      required: ['max_items', 'max_queued'],
      additionalProperties: false,
      properties: {
        max_items: { type: 'integer', minimum: 0, description: 'Most items one job may hold.' },
        max_queued: { type: 'integer', minimum: 0, description: 'Jobs that may wait to start at once.' },
      },
    },
    transcription: {
      type: 'object',
      description:
        'Speech-to-text of captionless videos (`mode` auto or transcribe): the longest audio the tier may have transcribed, the longest extract, batch and playlist transcribe while the client waits (longer: a bulk job), and the seconds of audio the model may process for the account per UTC day.',
      required: ['max_seconds', 'sync_max_seconds', 'model_seconds_per_day', 'model_seconds_used_today'],
      additionalProperties: false,
      properties: {
        max_seconds: {
          type: 'integer',
          minimum: 0,
          description: 'Seconds of audio per video for this tier; 0: the tier has no transcription.',
        },
        sync_max_seconds: {
          type: 'integer',
          minimum: 0,
          description: 'Seconds of audio extract transcribes while the client waits (at most max_seconds).',
        },
        model_seconds_per_day: {
          type: 'integer',
          minimum: 0,
          description:
            'Seconds of audio the model may process for this account per UTC day, failures included (every tier has a budget); past it 429 RATE_LIMITED, reason model_budget.',
        },
        model_seconds_used_today: {
          type: 'integer',
          minimum: 0,
          description: 'Seconds of that budget used today (resets at 00:00 UTC).',
        },
      },
    },
    request_id: { type: 'string' },
  },
};

export const ACCOUNT_OPERATIONS: OperationSpec[] = [
  {
    method: 'GET',
    path: '/api/v1/account',
    operationId: 'getAccount',
    summary: 'The calling key’s tier, balance and limits',
    description:
      'What a pipeline needs to budget before it spends: the tier, the credit balance, today’s requests against the daily limit and when it resets, which operations the tier may call, and the tier’s job limits. Free, not counted against the daily limit; counted against the free reads’ per-minute limit (`ACCOUNT_READ_LIMIT_PER_MINUTE`).',
    auth: 'account',
    scope: 'account:read',
    credits: 'none; not counted against the daily limit',
    tag: 'Account',
    response: accountSchema,
    errors: ['UNAUTHORIZED', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE'],
  },
];

/**
 * What every MCP tool is made of: the route caller it runs its twin through, its definition, and the
 * shared pieces of its answers (success, API errors as tool errors, paging fields).
 */
import type { AppError } from '@subx/errors';
import type { OperationSpec } from '../domain/operation-spec.ts';
import type { JsonSchema } from '@subx/public-api';
import { PAGE_CHARS } from './render.ts';

export interface RouteAnswer {
  status: number;
  headers: Record<string, string | number | string[] | undefined>;
  /** Parsed JSON for JSON answers, else the text. */
  body: unknown;
}

export type RouteCaller = (call: {
  spec: OperationSpec;
  /** Path parameters (`job_id` of `/api/v1/jobs/{job_id}`). */
  params?: Record<string, unknown>;
  body?: Record<string, unknown>;
  query?: Record<string, unknown>;
  idempotencyKey?: string;
}) => Promise<RouteAnswer>;

export interface ToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

export interface ToolDefinition {
  name: string;
  operationId: string;
  title: string;
  /** What the tool adds to (or takes from) its operation, first in the description. */
  lead: string;
  /** The operation's request fields the tool takes; `defaults` overrides their defaults. */
  fields: string[];
  defaults?: Record<string, unknown>;
  paged?: boolean;
  /**
   * The tool may charge credits. Such a tool is not read-only for a host deciding what to run
   * without asking (spending is a change to the account), though it changes nothing else.
   */
  spends: boolean;
  /** false: the same arguments again do more (a second job), unless an idempotency_key is given. */
  idempotent?: false;
  /** false: reads only this service's own records (the account, its jobs), never the platform. */
  openWorld?: false;
  outputSchema: JsonSchema;
  run(args: Record<string, unknown>, call: RouteCaller, spec: OperationSpec): Promise<ToolResult>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API bodies, read field by field
export type Body = Record<string, any>;

export const CURSOR = {
  type: 'string',
  maxLength: 16,
  description: `Where the page starts: omit for the first page, then pass the previous page's next_cursor. A page holds about ${PAGE_CHARS.toLocaleString('en')} characters; each page is one call of the operation (counted like it).`,
};
export const IDEMPOTENCY_KEY = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  pattern: '^[\\x21-\\x7e]+$',
  description:
    'Optional Idempotency-Key: a retry with the same key and arguments replays the first answer and is never charged twice.',
};
export const PAGING = {
  type: 'object',
  required: ['cursor', 'next_cursor'],
  properties: {
    cursor: { type: 'string' },
    next_cursor: { type: ['string', 'null'], description: 'null on the last page.' },
    first_segment: { type: 'integer' },
    segment_count: { type: 'integer' },
    total_segments: { type: 'integer' },
    first_comment: { type: 'integer' },
    comment_count: { type: 'integer' },
    total_comments: { type: 'integer' },
  },
};
export const str = { type: 'string' };

/** The request of a call, from the tool's arguments (tool-only arguments removed). */
export function requestFields(args: Record<string, unknown>, keep: string[] = []): Record<string, unknown> {
  const { cursor, idempotency_key: _key, ...rest } = args;
  return keep.includes('cursor') && cursor !== undefined ? { ...rest, cursor } : rest;
}
export const keyOf = (args: Record<string, unknown>) =>
  typeof args.idempotency_key === 'string' ? { idempotencyKey: args.idempotency_key } : {};

export function ok(text: string, structuredContent: Record<string, unknown>): ToolResult {
  return { content: [{ type: 'text', text }], structuredContent };
}

/** An API error as a tool error: the API's code, message and whether to retry (and when). */
export function toolError(answer: RouteAnswer): ToolResult {
  const error = (answer.body as Body | undefined)?.error as Body | undefined;
  const retryAfter = Number(answer.headers['retry-after']);
  const detail: Body = {
    ...(error ?? { code: 'INTERNAL_ERROR', message: `Unexpected answer (HTTP ${answer.status}).` }),
    http_status: answer.status,
    ...(Number.isFinite(retryAfter) ? { retry_after_seconds: retryAfter } : {}),
  };
  const advice = detail.retryable
    ? `Retryable${Number.isFinite(retryAfter) ? ` after ${retryAfter} s` : ''}.`
    : 'Not retryable as is.';
  return {
    isError: true,
    content: [
      {
        type: 'text',
        text: `${String(detail.code)}: ${String(detail.message)} ${advice}\n${JSON.stringify({ error: detail })}`,
      },
    ],
  };
}

/** An error the tool finds itself (bad arguments), in the API's error shape. */
export function appErrorResult(error: AppError): ToolResult {
  return toolError({
    status: error.status,
    headers: {},
    body: { error: { code: error.code, message: error.message, retryable: error.retryable } },
  });
}

export const isOk = (a: RouteAnswer) => a.status >= 200 && a.status < 300;

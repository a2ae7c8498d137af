/**
 * The gateway's admin API over HTTP with the admin token: the dashboard holds no account data of
 * its own beyond who signed up, and every key and usage figure comes from the gateway (whose
 * regenerate and revoke already take effect on every replica at once). Each call has a deadline.
 */
import { REQUEST_ID_HEADER } from '@subx/service-kit';

export type Tier = 'free' | 'pro' | 'business' | 'enterprise';
export const TIERS: readonly Tier[] = ['free', 'pro', 'business', 'enterprise'];

export interface GatewayAccount {
  account_id: string;
  tier: Tier;
  credits: number;
  email: string | null;
  created_at: string;
  key: { prefix: string; last4: string; created_at: string; status: 'active' | 'revoked' };
  usage: { today_requests: number; month_credits: number };
}

export interface AccountLimits {
  account_id: string;
  tier: Tier;
  daily: { limit: number | null; used: number; remaining: number | null; reset_at: string };
  credits: { balance: number; monthly_allowance: number };
  /** Per operation: the lowest tier that may call it, and whether this account's tier may. */
  operations?: Record<string, { minimum_tier: Tier; allowed: boolean }>;
}

export interface UsageDay {
  date: string;
  requests: number;
  credits: number;
  operations: Record<string, { requests: number; credits: number }>;
}

export interface AccountUsage {
  account_id: string;
  from: string;
  to: string;
  days: UsageDay[];
  total_requests: number;
  total_credits: number;
}

export interface CallResult {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** The account's webhook signing secret (GET/POST /admin/v1/accounts/{id}/webhook-secret). */
export interface WebhookSecret {
  secret: string;
  created_at: string;
  /** Until when the previous secret also signs, after a rotation; null when there is none. */
  previous_secret_expires_at: string | null;
}

/** One bulk job as GET /admin/v1/accounts/{id}/jobs lists it (newest first). */
export interface JobSummary {
  job_id: string;
  status: 'queued' | 'running' | 'completed' | 'failed' | 'canceled' | string;
  source: { type: string; [key: string]: unknown };
  progress: { total: number | null; succeeded: number; failed: number; pending: number };
  credits_charged: number;
  created_at: string;
  finished_at: string | null;
}

export interface JobsPage {
  jobs: JobSummary[];
  next_cursor: string | null;
}

export class GatewayError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string) {
    super(`gateway answered ${status} ${code}`);
    this.name = 'GatewayError';
    this.status = status;
    this.code = code;
  }
}

export interface GatewayClient {
  /** The same client, sending `requestId` as X-Request-Id on each call (log correlation). */
  forRequest(requestId: string): GatewayClient;
  createAccount(email: string): Promise<{ account_id: string }>;
  getAccount(id: string): Promise<GatewayAccount>;
  updateAccount(
    id: string,
    change: { tier?: Tier; add_credits?: number; credits?: number },
  ): Promise<GatewayAccount>;
  /** Generate or regenerate: the new key (shown once, never stored or logged here). */
  issueKey(id: string): Promise<string>;
  revokeKey(id: string): Promise<void>;
  limits(id: string): Promise<AccountLimits>;
  usage(id: string, from: string, to: string): Promise<AccountUsage>;
  webhookSecret(id: string): Promise<WebhookSecret>;
  /** A new signing secret; the previous one keeps signing for 24 hours. */
  rotateWebhookSecret(id: string): Promise<WebhookSecret>;
  /** The account's bulk jobs, newest first, one page (`cursor` from the previous page's next_cursor). */
  jobs(id: string, page: { limit: number; cursor?: string }): Promise<JobsPage>;
  call(
    id: string,
    request: {
      path: '/api/v1/extract' | '/api/v1/validate';
      body?: unknown;
      query?: Record<string, string>;
      client_ip?: string;
    },
  ): Promise<CallResult>;
}

export function createGatewayClient(options: {
  baseUrl: string;
  adminToken: string;
  timeoutMs: number;
  /** Sent as X-Request-Id (the gateway's admin listener keeps a well-formed one as its own). */
  requestId?: string;
}): GatewayClient {
  const base = options.baseUrl.replace(/\/+$/, '');

  async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${options.adminToken}`,
        ...(options.requestId ? { [REQUEST_ID_HEADER]: options.requestId } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    if (res.status === 204) return undefined as T;
    const text = await res.text();
    if (!res.ok) {
      let code = 'UNKNOWN';
      try {
        code = String((JSON.parse(text) as { error?: { code?: unknown } }).error?.code ?? code);
      } catch {
        // not JSON: keep UNKNOWN
      }
      throw new GatewayError(res.status, code);
    }
    return JSON.parse(text) as T;
  }

  const account = (id: string) => `/admin/v1/accounts/${encodeURIComponent(id)}`;
  return {
    forRequest: (requestId) => createGatewayClient({ ...options, requestId }),
    createAccount: (email) => request('POST', '/admin/v1/accounts', { tier: 'free', email }),
    getAccount: (id) => request('GET', account(id)),
    updateAccount: (id, change) => request('PATCH', account(id), change),
    issueKey: async (id) => (await request<{ api_key: string }>('POST', `${account(id)}/api-key`)).api_key,
    revokeKey: (id) => request('DELETE', `${account(id)}/api-key`),
    limits: (id) => request('GET', `${account(id)}/limits`),
    usage: (id, from, to) => request('GET', `${account(id)}/usage?from=${from}&to=${to}`),
    webhookSecret: (id) => request('GET', `${account(id)}/webhook-secret`),
    rotateWebhookSecret: (id) => request('POST', `${account(id)}/webhook-secret`),
    jobs: (id, page) => {
      const query = new URLSearchParams({ limit: String(page.limit) });
      if (page.cursor) query.set('cursor', page.cursor);
      return request('GET', `${account(id)}/jobs?${query.toString()}`);
    },
    call: (id, req) => request('POST', `${account(id)}/calls`, req),
  };
}

/**
 * The gateway's admin API over HTTP with the admin token: the dashboard holds no account data of
 * its own beyond who signed up, and every key and usage figure comes from the gateway (whose
 * regenerate and revoke already take effect on every replica at once). Each call has a deadline.
 */
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type {
  Account,
  AccountDeleted,
  AccountLimits,
  AccountUsage,
  CallBody,
  CallResult,
  CreateAccountBody,
  CreatedAccount,
  IssuedKey,
  JobsPage,
  SecuredAccount,
  UpdateAccountBody,
  WatchList,
  WatchSummary,
  WebhookSecret,
} from '@subx/contracts/admin-api';
import type { ApiKeyInfo, ApiKeyList, CreateApiKeyBody, CreatedApiKey } from '@subx/contracts/access';
import type { AuditPage, RecordAuditBody } from '@subx/contracts/audit';
import type {
  MemberWorkspaces,
  PutWorkspaceMemberBody,
  RemovedWorkspaceMember,
  WorkspaceMember,
  WorkspaceMemberList,
} from '@subx/contracts/workspaces';
import type { RetentionSettings, UpdateRetentionBody } from '@subx/contracts/retention';
import { REQUEST_ID_HEADER } from '@subx/service-kit';

// The admin API's shapes come from its schemas (the gateway validates and documents with the same
// objects); nothing here restates them.
export { ACCOUNT_TIERS as TIERS } from '@subx/contracts/admin-api';
export type {
  Account as GatewayAccount,
  AccountDeleted,
  AccountLimits,
  AccountTier as Tier,
  AccountUsage,
  CallResult,
  JobSummary,
  JobsPage,
  SecuredAccount,
  UsageDay,
  WatchList,
  WatchSummary,
  WebhookSecret,
} from '@subx/contracts/admin-api';
export { API_KEY_SCOPES, API_KEY_SCOPE_DESCRIPTIONS } from '@subx/contracts/access';
export type { ApiKeyInfo, ApiKeyScope, CreateApiKeyBody } from '@subx/contracts/access';
export type { AuditEventView, AuditPage } from '@subx/contracts/audit';
export type { WorkspaceMember } from '@subx/contracts/workspaces';
export { RETENTION_FIELDS } from '@subx/contracts/retention';
export type { RetentionField, RetentionSettings, UpdateRetentionBody } from '@subx/contracts/retention';

/** An export streams for at most this many call deadlines (a large workspace takes a while). */
const EXPORT_DEADLINE_FACTOR = 10;

export class GatewayError extends Error {
  readonly status: number;
  readonly code: string;
  /** The gateway's own message (what is wrong with a request), null when it sent none. */
  readonly detail: string | null;
  constructor(status: number, code: string, detail: string | null = null) {
    super(`gateway answered ${status} ${code}`);
    this.name = 'GatewayError';
    this.status = status;
    this.code = code;
    this.detail = detail;
  }
}

export interface GatewayClient {
  /** The same client, sending `requestId` as X-Request-Id on each call (log correlation). */
  forRequest(requestId: string): GatewayClient;
  createAccount(email: string): Promise<Pick<CreatedAccount, 'account_id'>>;
  getAccount(id: string): Promise<Account>;
  updateAccount(id: string, change: UpdateAccountBody): Promise<Account>;
  /** Generate or regenerate: the new key (shown once, never stored or logged here). */
  issueKey(id: string): Promise<string>;
  revokeKey(id: string): Promise<void>;
  /**
   * After a compromise (a password reset, an operator's revocation): pauses the watches and cancels
   * the jobs the key made, replaces or revokes it, and replaces the webhook secret with no grace.
   */
  secureAccount(id: string, key: 'replace' | 'revoke'): Promise<SecuredAccount>;
  limits(id: string): Promise<AccountLimits>;
  usage(id: string, from: string, to: string): Promise<AccountUsage>;
  webhookSecret(id: string): Promise<WebhookSecret>;
  /** A new signing secret; the previous one keeps signing for 24 hours. */
  rotateWebhookSecret(id: string): Promise<WebhookSecret>;
  /** The account's bulk jobs, newest first, one page (`cursor` from the previous page's next_cursor). */
  jobs(id: string, page: { limit: number; cursor?: string }): Promise<JobsPage>;
  /** The account's watches, newest first. */
  watches(id: string): Promise<WatchList>;
  /** Stops and deletes one of the account's watches (404 NOT_FOUND: not one of its watches). */
  deleteWatch(id: string, watchId: string): Promise<void>;
  /** Runs a watch paused after a compromise again (404 NOT_FOUND: not one of its watches). */
  resumeWatch(id: string, watchId: string): Promise<WatchSummary>;
  call(id: string, request: CallBody): Promise<CallResult>;
  /** The account's keys: the primary key first, then the named keys by creation (revoked ones too). */
  listKeys(id: string): Promise<ApiKeyInfo[]>;
  /**
   * A named key made by the dashboard user `memberId` (the audit log's actor): the key itself is in
   * this answer only. 400 INVALID_REQUEST (its detail says what, the 50-key cap included).
   */
  createKey(id: string, body: CreateApiKeyBody, memberId: string): Promise<CreatedApiKey>;
  /** Revokes a named key (404 NOT_FOUND: not one of the account's; 400 INVALID_REQUEST: the primary key). */
  revokeNamedKey(id: string, keyId: string, memberId: string): Promise<ApiKeyInfo>;
  /** One page of the account's audit log, newest first (`cursor` from the previous page's next_cursor). */
  auditPage(id: string, page: { limit: number; cursor?: string }): Promise<AuditPage>;
  /** Records what only the dashboard sees (a sign-in, a failed one, a password reset) in the account's audit log. */
  recordAudit(id: string, event: RecordAuditBody): Promise<void>;
  /** The workspace's members, owners first. */
  members(id: string): Promise<WorkspaceMember[]>;
  /**
   * Adds `userId` with the role, or changes their role; `by` is the member acting (the audit log's
   * actor). 400 INVALID_REQUEST when it would leave no owner.
   */
  putMember(id: string, userId: string, body: PutWorkspaceMemberBody, by: string): Promise<WorkspaceMember>;
  /** Removes a member; their keys are revoked unless `reassignTo` takes them (400: the last owner). */
  removeMember(id: string, userId: string, by: string, reassignTo?: string): Promise<RemovedWorkspaceMember>;
  /** Where the person belongs, with which role, oldest membership first. */
  workspacesOf(userId: string): Promise<MemberWorkspaces['workspaces']>;
  /** The account's data retention with its tier's caps. */
  retention(id: string): Promise<RetentionSettings>;
  /**
   * Sets (days) or resets (null) the fields sent, the dashboard user `memberId` the audit log's
   * actor; 400 INVALID_REQUEST (its detail names the field and the cap) past the tier's cap.
   */
  updateRetention(id: string, change: UpdateRetentionBody, memberId: string): Promise<RetentionSettings>;
  /**
   * Deletes the workspace and everything it owns, asked by the dashboard user `memberId`
   * (404 NOT_FOUND: it does not exist, or is gone already; 503: call again to finish).
   */
  deleteAccount(id: string, memberId: string): Promise<AccountDeleted>;
  /**
   * The workspace's export (JSON lines), streamed as the gateway reads it: its file name and body.
   * The download as a whole is bounded by ten times the call deadline.
   */
  exportArchive(id: string, memberId: string): Promise<{ filename: string; body: Readable }>;
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
      let detail: string | null = null;
      try {
        const error = (JSON.parse(text) as { error?: { code?: unknown; message?: unknown } }).error;
        code = String(error?.code ?? code);
        // Only a client error's message says what to change; a 5xx message is not for people.
        if (res.status < 500 && typeof error?.message === 'string') detail = error.message.slice(0, 500);
      } catch {
        // not JSON: keep UNKNOWN
      }
      throw new GatewayError(res.status, code, detail);
    }
    return JSON.parse(text) as T;
  }

  const account = (id: string) => `/admin/v1/accounts/${encodeURIComponent(id)}`;
  return {
    forRequest: (requestId) => createGatewayClient({ ...options, requestId }),
    createAccount: (email) =>
      request('POST', '/admin/v1/accounts', { tier: 'free', email } satisfies CreateAccountBody),
    getAccount: (id) => request('GET', account(id)),
    updateAccount: (id, change) => request('PATCH', account(id), change),
    issueKey: async (id) => (await request<IssuedKey>('POST', `${account(id)}/api-key`)).api_key,
    revokeKey: (id) => request('DELETE', `${account(id)}/api-key`),
    secureAccount: (id, key) => request('POST', `${account(id)}/secure`, { key }),
    limits: (id) => request('GET', `${account(id)}/limits`),
    usage: (id, from, to) => request('GET', `${account(id)}/usage?from=${from}&to=${to}`),
    webhookSecret: (id) => request('GET', `${account(id)}/webhook-secret`),
    rotateWebhookSecret: (id) => request('POST', `${account(id)}/webhook-secret`),
    jobs: (id, page) => {
      const query = new URLSearchParams({ limit: String(page.limit) });
      if (page.cursor) query.set('cursor', page.cursor);
      return request('GET', `${account(id)}/jobs?${query.toString()}`);
    },
    watches: (id) => request('GET', `${account(id)}/watches`),
    deleteWatch: async (id, watchId) => {
      await request('DELETE', `${account(id)}/watches/${encodeURIComponent(watchId)}`);
    },
    resumeWatch: (id, watchId) =>
      request('POST', `${account(id)}/watches/${encodeURIComponent(watchId)}/resume`),
    call: (id, req) => request('POST', `${account(id)}/calls`, req),
    listKeys: async (id) => (await request<ApiKeyList>('GET', `${account(id)}/keys`)).keys,
    createKey: (id, body, memberId) =>
      request('POST', `${account(id)}/keys?${new URLSearchParams({ member_id: memberId }).toString()}`, body),
    revokeNamedKey: (id, keyId, memberId) =>
      request(
        'DELETE',
        `${account(id)}/keys/${encodeURIComponent(keyId)}?${new URLSearchParams({ member_id: memberId }).toString()}`,
      ),
    auditPage: (id, page) => {
      const query = new URLSearchParams({ limit: String(page.limit) });
      if (page.cursor) query.set('cursor', page.cursor);
      return request('GET', `${account(id)}/audit?${query.toString()}`);
    },
    recordAudit: (id, event) => request('POST', `${account(id)}/audit`, event),
    members: async (id) => (await request<WorkspaceMemberList>('GET', `${account(id)}/members`)).members,
    putMember: (id, userId, body, by) =>
      request(
        'PUT',
        `${account(id)}/members/${encodeURIComponent(userId)}?${new URLSearchParams({ member_id: by }).toString()}`,
        body,
      ),
    removeMember: (id, userId, by, reassignTo) => {
      const query = new URLSearchParams({ member_id: by });
      if (reassignTo) query.set('reassign_to', reassignTo);
      return request('DELETE', `${account(id)}/members/${encodeURIComponent(userId)}?${query.toString()}`);
    },
    workspacesOf: async (userId) =>
      (await request<MemberWorkspaces>('GET', `/admin/v1/members/${encodeURIComponent(userId)}/workspaces`))
        .workspaces,
    retention: (id) => request('GET', `${account(id)}/retention`),
    updateRetention: (id, change, memberId) =>
      request(
        'PATCH',
        `${account(id)}/retention?${new URLSearchParams({ member_id: memberId }).toString()}`,
        change,
      ),
    deleteAccount: (id, memberId) =>
      request('DELETE', `${account(id)}?${new URLSearchParams({ member_id: memberId }).toString()}`),
    async exportArchive(id, memberId) {
      const query = new URLSearchParams({ member_id: memberId }).toString();
      const res = await fetch(`${base}${account(id)}/export?${query}`, {
        headers: {
          authorization: `Bearer ${options.adminToken}`,
          ...(options.requestId ? { [REQUEST_ID_HEADER]: options.requestId } : {}),
        },
        signal: AbortSignal.timeout(EXPORT_DEADLINE_FACTOR * options.timeoutMs),
      });
      if (!res.ok || !res.body) {
        const text = await res.text().catch(() => '');
        let code = 'UNKNOWN';
        try {
          code = String((JSON.parse(text) as { error?: { code?: unknown } }).error?.code ?? code);
        } catch {
          // not JSON: keep UNKNOWN
        }
        throw new GatewayError(res.status, code);
      }
      const disposition = res.headers.get('content-disposition') ?? '';
      const filename = /filename="([A-Za-z0-9._-]+)"/.exec(disposition)?.[1] ?? `subx-export-${id}.jsonl`;
      return { filename, body: Readable.fromWeb(res.body as WebReadableStream) };
    },
  };
}

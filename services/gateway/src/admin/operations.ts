/**
 * The admin operations (/admin/v1 on the admin listener): one table from which the admin routes
 * take their request schemas (validated by fastify/ajv, as the public routes are) and the admin
 * listener's /openapi.json is built (admin/openapi.ts). The schemas themselves live in
 * `@subx/contracts/admin-api`, where the dashboard's client takes its types from.
 */
import {
  accountDeletedSchema,
  accountIdParamsSchema,
  accountWatchParamsSchema,
  accountLimitsSchema,
  accountSchema,
  accountUsageSchema,
  apiKeySchema,
  callBodySchema,
  callResultSchema,
  createAccountBodySchema,
  createdAccountSchema,
  jobsPageSchema,
  jobsQuerySchema,
  secureAccountBodySchema,
  securedAccountSchema,
  updateAccountBodySchema,
  usageQuerySchema,
  watchDeletedSchema,
  watchListSchema,
  watchSchema,
  webhookSecretSchema,
} from '@subx/contracts/admin-api';
import {
  accountKeyParamsSchema,
  actingMemberQuerySchema,
  apiKeyInfoSchema,
  apiKeyListSchema,
  createApiKeyBodySchema,
  createdApiKeySchema,
} from '@subx/contracts/access';
import { auditPageSchema, auditQuerySchema, recordAuditBodySchema } from '@subx/contracts/audit';
import {
  memberParamsSchema,
  memberWorkspacesSchema,
  putWorkspaceMemberBodySchema,
  removedWorkspaceMemberSchema,
  removeWorkspaceMemberQuerySchema,
  workspaceMemberListSchema,
  workspaceMemberParamsSchema,
  workspaceMemberSchema,
} from '@subx/contracts/workspaces';
import { retentionSettingsSchema, updateRetentionBodySchema } from '@subx/contracts/retention';
import type { ErrorCode } from '@subx/errors';
import { BODY_ERROR_CODES } from '@subx/public-api';
import type { JsonSchema } from '@subx/public-api';

export interface AdminOperationSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** OpenAPI form: `/admin/v1/accounts/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  description: string;
  /** Accounts: what operators manage; Self-service: what the dashboard does for an account's owner. */
  tag: 'Accounts' | 'Self-service';
  params?: JsonSchema;
  querystring?: JsonSchema;
  body?: JsonSchema;
  successStatus: 200 | 201 | 204;
  /** The success body; none for 204. */
  response?: JsonSchema;
  /** The success body's media type; default `application/json`. */
  mediaType?: string;
  /** The success response carries `Cache-Control: no-store` (it holds a key or a secret). */
  noStore?: boolean;
  /** Besides UNAUTHORIZED and RATE_LIMITED, which every admin route can answer. */
  errors: ErrorCode[];
}

/** What any route with a JSON body can answer besides its own codes. */
const BODY_ERRORS: ErrorCode[] = ['INVALID_REQUEST', ...BODY_ERROR_CODES];
const ACCOUNT = '/admin/v1/accounts/{id}';
const params = accountIdParamsSchema;

export const ADMIN_OPERATION_SPECS: AdminOperationSpec[] = [
  {
    method: 'POST',
    path: '/admin/v1/accounts',
    operationId: 'createAccount',
    summary: 'Create an account and its first key',
    tag: 'Accounts',
    description:
      "Creates an account of the tier with its tier's monthly allowance (or `credits`) and issues its first API key, shown in this response only.",
    body: createAccountBodySchema,
    successStatus: 201,
    response: createdAccountSchema,
    noStore: true,
    errors: BODY_ERRORS,
  },
  {
    method: 'GET',
    path: ACCOUNT,
    operationId: 'getAccount',
    summary: 'The account',
    tag: 'Accounts',
    description:
      'Tier, balance, e-mail, the key without its secret part (prefix, last four characters, status) and today’s requests and this month’s credits.',
    params,
    successStatus: 200,
    response: accountSchema,
    errors: ['NOT_FOUND'],
  },
  {
    method: 'PATCH',
    path: ACCOUNT,
    operationId: 'updateAccount',
    summary: 'Change the tier or the balance',
    tag: 'Accounts',
    description:
      '`tier` changes the tier (effective on the next request on every replica); `credits` sets the balance, `add_credits` adds to it (not both). Answers the account.',
    params,
    body: updateAccountBodySchema,
    successStatus: 200,
    response: accountSchema,
    errors: [...BODY_ERRORS, 'NOT_FOUND'],
  },
  {
    method: 'POST',
    path: `${ACCOUNT}/api-key`,
    operationId: 'issueApiKey',
    summary: 'Generate or regenerate the key',
    tag: 'Accounts',
    description:
      'Issues a new key, shown in this response only; the previous one stops working at once on every replica. Takes no body.',
    params,
    successStatus: 201,
    response: apiKeySchema,
    noStore: true,
    errors: ['NOT_FOUND'],
  },
  {
    method: 'DELETE',
    path: `${ACCOUNT}/api-key`,
    operationId: 'revokeApiKey',
    summary: 'Revoke the key',
    tag: 'Accounts',
    description: 'The key stops working at once on every replica; the account stays.',
    params,
    successStatus: 204,
    errors: ['NOT_FOUND'],
  },
  {
    method: 'GET',
    path: `${ACCOUNT}/keys`,
    operationId: 'listAccountKeys',
    summary: 'The account’s keys',
    tag: 'Self-service',
    description:
      'The primary key, then the named keys with their scopes, as the public GET /api/v1/keys lists them.',
    params,
    successStatus: 200,
    response: apiKeyListSchema,
    errors: ['NOT_FOUND'],
  },
  {
    method: 'POST',
    path: `${ACCOUNT}/keys`,
    operationId: 'createAccountKey',
    summary: 'Make a named key with scopes',
    tag: 'Self-service',
    description:
      'As the public POST /api/v1/keys, with any scopes; the key is in this response only. `member_id`: the dashboard user asking (recorded in the audit log).',
    params,
    querystring: actingMemberQuerySchema,
    body: createApiKeyBodySchema,
    successStatus: 201,
    response: createdApiKeySchema,
    noStore: true,
    errors: [...BODY_ERRORS, 'NOT_FOUND'],
  },
  {
    method: 'DELETE',
    path: `${ACCOUNT}/keys/{key_id}`,
    operationId: 'revokeAccountKey',
    summary: 'Revoke a named key',
    tag: 'Self-service',
    description:
      'The key stops working on every replica before this answers; the primary key is revoked by DELETE …/api-key instead (400 INVALID_REQUEST here). `member_id`: the dashboard user asking.',
    params: accountKeyParamsSchema,
    querystring: actingMemberQuerySchema,
    successStatus: 200,
    response: apiKeyInfoSchema,
    errors: ['INVALID_REQUEST', 'NOT_FOUND'],
  },
  {
    method: 'POST',
    path: `${ACCOUNT}/secure`,
    operationId: 'secureAccount',
    summary: 'Take the account back after its password or key leaked',
    tag: 'Accounts',
    description:
      'For a password reset or an operator who revokes a key for compromise. Pauses the watches and cancels the queued and running jobs that the current key (or the last one, when it is revoked already) created, replaces or revokes that key, then replaces the webhook signing secret with no grace period: the old secret stops signing at once. Answers what it paused and canceled; the owner resumes the watches in the dashboard. Safe to repeat.',
    params,
    body: secureAccountBodySchema,
    successStatus: 200,
    response: securedAccountSchema,
    noStore: true,
    errors: [...BODY_ERRORS, 'NOT_FOUND'],
  },
  {
    method: 'GET',
    path: `${ACCOUNT}/usage`,
    operationId: 'getAccountUsage',
    summary: 'Requests and credits per day',
    tag: 'Accounts',
    description:
      'Per UTC day and per operation, from billing. `from` must not be after `to`; the range spans at most 366 days; both must be real dates.',
    params,
    querystring: usageQuerySchema,
    successStatus: 200,
    response: accountUsageSchema,
    errors: ['INVALID_REQUEST', 'NOT_FOUND'],
  },
  {
    method: 'GET',
    path: `${ACCOUNT}/limits`,
    operationId: 'getAccountLimits',
    summary: 'Today’s requests against the daily limit, and the credits',
    tag: 'Self-service',
    description:
      "The daily limit with today's count and the reset time, the credit balance and the tier's monthly allowance, from the one pricing table.",
    params,
    successStatus: 200,
    response: accountLimitsSchema,
    errors: ['NOT_FOUND'],
  },
  {
    method: 'POST',
    path: `${ACCOUNT}/calls`,
    operationId: 'callAsAccount',
    summary: 'Call the public API on behalf of the account',
    tag: 'Self-service',
    description:
      "For the dashboard's playground, which never holds the account's key: the call runs through the real public route (auth, tier, daily limit, credits, validation), counts and is billed like a call with the key. An account without an active key gets the 401 a missing key gets. The public API's answer, whatever its status, is this call's 200 body.",
    params,
    body: callBodySchema,
    successStatus: 200,
    response: callResultSchema,
    noStore: true,
    errors: [...BODY_ERRORS, 'NOT_FOUND'],
  },
  {
    method: 'GET',
    path: `${ACCOUNT}/webhook-secret`,
    operationId: 'getWebhookSecret',
    summary: 'The webhook signing secret',
    tag: 'Self-service',
    description:
      'The secret job webhooks of the account are signed with (created on first need), as GET /api/v1/webhooks/secret answers it. SERVICE_UNAVAILABLE when the gateway runs without webhooks.',
    params,
    successStatus: 200,
    response: webhookSecretSchema,
    noStore: true,
    errors: ['NOT_FOUND', 'SERVICE_UNAVAILABLE'],
  },
  {
    method: 'POST',
    path: `${ACCOUNT}/webhook-secret`,
    operationId: 'rotateWebhookSecret',
    summary: 'Rotate the webhook signing secret',
    tag: 'Self-service',
    description:
      'A new secret, as POST /api/v1/webhooks/secret answers it; the previous one keeps signing for 24 hours. Takes no body.',
    params,
    successStatus: 201,
    response: webhookSecretSchema,
    noStore: true,
    errors: ['NOT_FOUND', 'SERVICE_UNAVAILABLE'],
  },
  {
    method: 'GET',
    path: `${ACCOUNT}/jobs`,
    operationId: 'listAccountJobs',
    summary: 'The account’s bulk jobs',
    tag: 'Self-service',
    description:
      'One page, newest first, in the page shape of the public GET /api/v1/jobs. Only on a gateway with bulk jobs (else this route is not there: 404).',
    params,
    querystring: jobsQuerySchema,
    successStatus: 200,
    response: jobsPageSchema,
    errors: ['INVALID_REQUEST', 'NOT_FOUND'],
  },
  {
    method: 'GET',
    path: `${ACCOUNT}/watches`,
    operationId: 'listAccountWatches',
    summary: 'The account’s watches',
    tag: 'Self-service',
    description:
      'Every watch of the account, newest first, as the public GET /api/v1/watches lists them. Only on a gateway with watches (else this route is not there: 404).',
    params,
    successStatus: 200,
    response: watchListSchema,
    errors: ['NOT_FOUND'],
  },
  {
    method: 'DELETE',
    path: `${ACCOUNT}/watches/{watch_id}`,
    operationId: 'deleteAccountWatch',
    summary: 'Delete one of the account’s watches',
    tag: 'Self-service',
    description:
      'Stops and deletes the watch, as the public DELETE /api/v1/watches/{watch_id} does (the jobs it started run on). NOT_FOUND for an account or watch that does not exist, or a watch of another account.',
    params: accountWatchParamsSchema,
    successStatus: 200,
    response: watchDeletedSchema,
    errors: ['NOT_FOUND'],
  },
  {
    method: 'POST',
    path: `${ACCOUNT}/watches/{watch_id}/resume`,
    operationId: 'resumeAccountWatch',
    summary: 'Resume one of the account’s paused watches',
    tag: 'Self-service',
    description:
      'Clears the pause of a watch (`paused`, set when the key that created it was revoked after a compromise); its next run is due at once. A watch that is not paused is answered as it is. NOT_FOUND for an account or watch that does not exist, or a watch of another account. Takes no body.',
    params: accountWatchParamsSchema,
    successStatus: 200,
    response: watchSchema,
    errors: ['NOT_FOUND'],
  },
  {
    method: 'GET',
    path: `${ACCOUNT}/audit`,
    operationId: 'listAccountAuditEvents',
    summary: 'The account’s audit log',
    tag: 'Accounts',
    description:
      'One page of the account’s audit events, newest first, in the page shape of the public GET /api/v1/audit: keys, refused calls, the webhook secret, watches, operator changes, the dashboard’s sign-ins. Kept AUDIT_RETENTION_DAYS (365). SERVICE_UNAVAILABLE when the gateway runs without an audit log.',
    params,
    querystring: auditQuerySchema,
    successStatus: 200,
    response: auditPageSchema,
    errors: ['INVALID_REQUEST', 'NOT_FOUND', 'SERVICE_UNAVAILABLE'],
  },
  {
    method: 'POST',
    path: `${ACCOUNT}/audit`,
    operationId: 'recordAccountAuditEvent',
    summary: 'Record what a member did in the dashboard',
    tag: 'Self-service',
    description:
      'For the dashboard, which alone sees them: a sign-in, a failed sign-in for an e-mail that belongs to the account, a password reset. Recorded with actor `member` (`member_id`, never an e-mail) and the person’s address. Answers once the event is stored or its failure logged; a failure to store is not the caller’s problem (204 either way).',
    params,
    body: recordAuditBodySchema,
    successStatus: 204,
    errors: [...BODY_ERRORS, 'NOT_FOUND'],
  },
  {
    method: 'GET',
    path: `${ACCOUNT}/members`,
    operationId: 'listWorkspaceMembers',
    summary: 'The workspace’s members and their roles',
    tag: 'Self-service',
    description:
      'The dashboard users who belong to the workspace (the account), owners first. A workspace made by the admin API or `npm start` has none until the dashboard adds its first owner.',
    params,
    successStatus: 200,
    response: workspaceMemberListSchema,
    errors: ['NOT_FOUND'],
  },
  {
    method: 'PUT',
    path: `${ACCOUNT}/members/{user_id}`,
    operationId: 'putWorkspaceMember',
    summary: 'Add a member or change a member’s role',
    tag: 'Self-service',
    description:
      'Adds the person with the role (an accepted invitation), or changes the role of a member. INVALID_REQUEST when the change would leave the workspace without an owner, or when it has 100 members already. `member_id`: the dashboard user making the change (the audit log’s actor).',
    params: workspaceMemberParamsSchema,
    querystring: actingMemberQuerySchema,
    body: putWorkspaceMemberBodySchema,
    successStatus: 200,
    response: workspaceMemberSchema,
    errors: [...BODY_ERRORS, 'NOT_FOUND'],
  },
  {
    method: 'DELETE',
    path: `${ACCOUNT}/members/{user_id}`,
    operationId: 'removeWorkspaceMember',
    summary: 'Remove a member',
    tag: 'Self-service',
    description:
      'The person leaves the workspace. The keys they made are revoked on every replica before this answers, unless `reassign_to` names a member who takes them over. The last owner cannot be removed (INVALID_REQUEST). The dashboard ends the person’s sessions. NOT_FOUND for a workspace that does not exist or a person who is not a member.',
    params: workspaceMemberParamsSchema,
    querystring: removeWorkspaceMemberQuerySchema,
    successStatus: 200,
    response: removedWorkspaceMemberSchema,
    errors: ['INVALID_REQUEST', 'NOT_FOUND'],
  },
  {
    method: 'GET',
    path: '/admin/v1/members/{user_id}/workspaces',
    operationId: 'listMemberWorkspaces',
    summary: 'The workspaces a person belongs to',
    tag: 'Self-service',
    description: 'Each with the person’s role there, oldest membership first; empty for a person in none.',
    params: memberParamsSchema,
    successStatus: 200,
    response: memberWorkspacesSchema,
    errors: [],
  },
  {
    method: 'GET',
    path: `${ACCOUNT}/retention`,
    operationId: 'getAccountRetention',
    summary: 'How long the account keeps its data',
    tag: 'Self-service',
    description:
      'The account’s data retention with its tier’s caps, as the public GET /api/v1/account/retention answers it.',
    params,
    successStatus: 200,
    response: retentionSettingsSchema,
    errors: ['NOT_FOUND'],
  },
  {
    method: 'PATCH',
    path: `${ACCOUNT}/retention`,
    operationId: 'updateAccountRetention',
    summary: 'Change how long the account keeps its data',
    tag: 'Self-service',
    description:
      'As the public PATCH /api/v1/account/retention: the fields sent set (days) or reset (null), a value past the tier’s cap 400 INVALID_REQUEST naming the field and the cap; lowering applies to what is stored. `member_id`: the dashboard user asking (recorded in the audit log).',
    params,
    querystring: actingMemberQuerySchema,
    body: updateRetentionBodySchema,
    successStatus: 200,
    response: retentionSettingsSchema,
    errors: [...BODY_ERRORS, 'NOT_FOUND'],
  },
  {
    method: 'DELETE',
    path: ACCOUNT,
    operationId: 'deleteAccount',
    summary: 'Delete the workspace and everything it owns',
    tag: 'Self-service',
    description:
      "At its owner's request (GDPR art. 17). First every key of the workspace (primary and named) is revoked on every replica: each is 401 from then on. Then its running jobs are canceled and its watches stopped, and its data deleted from every store: the account, keys, jobs with their results, watches, webhook secrets and deliveries, audit events, workspace members, request counts and the key-value entries keyed by it. Billing keeps its ledger with the workspace's id replaced by a pseudonym, on the `accounts.v1` event this publishes. Answers what was removed, per kind. A call that fails half-way leaves the workspace refused and unknown to every other route, and is finished by calling again; once it answered, the workspace is 404 here and everywhere. `member_id`: the dashboard user asking (logged, never stored with the workspace). SERVICE_UNAVAILABLE on a gateway without deletion, or while the job service cannot be reached (call again).",
    params,
    querystring: actingMemberQuerySchema,
    successStatus: 200,
    response: accountDeletedSchema,
    errors: ['INVALID_REQUEST', 'NOT_FOUND', 'SERVICE_UNAVAILABLE'],
  },
  {
    method: 'GET',
    path: `${ACCOUNT}/export`,
    operationId: 'exportAccountData',
    summary: 'Everything the workspace holds, as JSON lines',
    tag: 'Self-service',
    description:
      "The archive of the public GET /api/v1/account/export, for the dashboard's owner: the same lines (`export`, `account`, `member`, `key`, `webhook_secret`, `watch`, `job`, `job_result`, `usage_day`, `audit_event`, then `end`), streamed as an attachment. Recorded in the audit log (`account.exported`, actor `member` with `member_id`, else `operator`). NOT_FOUND for an unknown or deleted workspace.",
    params,
    querystring: actingMemberQuerySchema,
    successStatus: 200,
    mediaType: 'application/x-ndjson',
    response: {
      type: 'string',
      description:
        'Lines of JSON, each with a `type`, as the public export answers them; the last, `end`, counts the lines before it.',
    },
    noStore: true,
    errors: ['INVALID_REQUEST', 'NOT_FOUND'],
  },
];

const routeUrl = (spec: AdminOperationSpec) => spec.path.replace(/\{(\w+)\}/g, ':$1');

/** The route's URL as fastify routes it (`{id}` → `:id`) and its request schemas. */
export function adminRoute(operationId: string): { url: string; schema: Record<string, JsonSchema> } {
  const spec = ADMIN_OPERATION_SPECS.find((o) => o.operationId === operationId);
  if (!spec) throw new Error(`unknown admin operation ${operationId}`);
  const schema: Record<string, JsonSchema> = {};
  if (spec.params) schema.params = spec.params;
  if (spec.querystring) schema.querystring = spec.querystring;
  if (spec.body) schema.body = spec.body;
  return { url: routeUrl(spec), schema };
}

/** Whether fastify's route (method, `:id` URL) is a row of the table. */
export function isAdminOperation(method: string, url: string): boolean {
  return ADMIN_OPERATION_SPECS.some((spec) => spec.method === method && routeUrl(spec) === url);
}

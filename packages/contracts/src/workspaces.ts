/**
 * Workspaces and their members, as JSON Schemas written once: the gateway (which keeps who belongs
 * to which workspace, beside the workspace's keys) validates the admin API's member routes with
 * them and serves them in its OpenAPI document, and the dashboard (which knows the people: their
 * addresses, passwords, sessions and invitations) takes its types and its role table from here.
 * Import it as `@subx/contracts/workspaces`.
 *
 * A workspace is what the API calls an account (`acct_…`): it owns the balance, the tier, the
 * keys, jobs, watches and webhooks. Its members are dashboard users (`usr_…`), each with one role.
 */
import type { FromSchema } from 'json-schema-to-ts';
import type { ApiKeyScope } from './access.ts';

/** Strongest first: the order the members page lists them in. */
export const WORKSPACE_ROLES = ['owner', 'admin', 'developer', 'billing', 'viewer'] as const;
export type WorkspaceRole = (typeof WORKSPACE_ROLES)[number];

export function isWorkspaceRole(value: unknown): value is WorkspaceRole {
  return typeof value === 'string' && (WORKSPACE_ROLES as readonly string[]).includes(value);
}

/**
 * What a member may do in the dashboard. Every dashboard page and form declares the one it needs
 * (a route without one fails the role table test); the table below is the only place that says
 * which role has which.
 */
export const WORKSPACE_PERMISSIONS = [
  /** The home page: balance, tier, today's requests. */
  'workspace:view',
  'usage:read',
  'keys:read',
  /** Named keys: make them (with the scopes the role may hand on) and revoke them. */
  'keys:manage',
  /** The primary key: generate, regenerate, revoke. */
  'primary-key:manage',
  'jobs:read',
  /** Watches: pausing, resuming and deleting them (jobs are made through the API). */
  'jobs:manage',
  /** The playground: calls on the workspace's behalf, paid from its credits. */
  'playground:use',
  /** The webhook signing secret: read and rotate. */
  'webhooks:manage',
  'members:read',
  /** Invite, change roles, remove. */
  'members:manage',
  'audit:read',
  /** The workspace's settings (data retention). */
  'settings:manage',
  /** Take the workspace's data out whole. */
  'workspace:export',
  'workspace:delete',
] as const;
export type WorkspacePermission = (typeof WORKSPACE_PERMISSIONS)[number];

const READ: readonly WorkspacePermission[] = [
  'workspace:view',
  'usage:read',
  'keys:read',
  'jobs:read',
  'members:read',
];

const ROLE_PERMISSIONS: Readonly<Record<WorkspaceRole, ReadonlySet<WorkspacePermission>>> = {
  owner: new Set(WORKSPACE_PERMISSIONS),
  admin: new Set(WORKSPACE_PERMISSIONS.filter((p) => p !== 'workspace:delete' && p !== 'workspace:export')),
  developer: new Set([...READ, 'keys:manage', 'jobs:manage', 'playground:use']),
  billing: new Set(['workspace:view', 'usage:read']),
  viewer: new Set(READ),
};

/** What each role is for, in a line (the members page shows them beside the role picker). */
export const WORKSPACE_ROLE_DESCRIPTIONS: Readonly<Record<WorkspaceRole, string>> = {
  owner: 'everything, including deleting the workspace, taking its data out and managing owners.',
  admin: 'everything but deleting or exporting the workspace: members, keys, webhooks, settings, audit log.',
  developer: 'named keys (without webhook or key administration scopes), jobs, watches and the playground.',
  billing: 'usage and balance only.',
  viewer: 'reads keys (without secrets), jobs, watches, usage and members; changes nothing.',
};

export function roleMay(role: WorkspaceRole, permission: WorkspacePermission): boolean {
  return ROLE_PERMISSIONS[role].has(permission);
}

/**
 * The scopes a member of this role may give a key they make: never more than the role itself may
 * do through the dashboard (a developer's key cannot read the webhook secret or make keys).
 */
export function scopesRoleMayGrant(role: WorkspaceRole): ReadonlySet<ApiKeyScope> {
  const scopes = new Set<ApiKeyScope>(['transcripts:read', 'ai', 'jobs', 'account:read']);
  if (roleMay(role, 'webhooks:manage')) scopes.add('webhooks:admin');
  if (roleMay(role, 'members:manage')) scopes.add('keys:admin');
  return roleMay(role, 'keys:manage') ? scopes : new Set();
}

/** Members one workspace may have, invitations pending included. */
export const MAX_WORKSPACE_MEMBERS = 100;

const memberIdSchema = {
  type: 'string',
  pattern: '^usr_[0-9a-f]{32}$',
  description: 'The dashboard user (`usr_` and 32 hex digits).',
} as const;
const roleSchema = {
  type: 'string',
  enum: WORKSPACE_ROLES,
  description:
    '`owner` (everything, deletion included), `admin` (everything but deleting and exporting), `developer` (keys, jobs, watches), `billing` (usage and balance), `viewer` (reads only).',
} as const;

export const workspaceMemberSchema = {
  type: 'object',
  required: ['member_id', 'email', 'role', 'joined_at'],
  additionalProperties: false,
  properties: {
    member_id: memberIdSchema,
    email: { type: 'string', description: 'The address the member signs in with.' },
    role: roleSchema,
    joined_at: { type: 'string', format: 'date-time' },
  },
} as const;
export type WorkspaceMember = FromSchema<typeof workspaceMemberSchema>;

export const workspaceMemberListSchema = {
  type: 'object',
  required: ['members'],
  additionalProperties: false,
  properties: {
    members: {
      type: 'array',
      items: workspaceMemberSchema,
      description: 'Owners first, then by role and joining.',
    },
  },
} as const;
export type WorkspaceMemberList = FromSchema<typeof workspaceMemberListSchema>;

export const workspaceMemberParamsSchema = {
  type: 'object',
  required: ['id', 'user_id'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', description: 'The workspace (account) id (`acct_` and 32 hex digits).' },
    user_id: memberIdSchema,
  },
} as const;
export type WorkspaceMemberParams = FromSchema<typeof workspaceMemberParamsSchema>;

export const memberParamsSchema = {
  type: 'object',
  required: ['user_id'],
  additionalProperties: false,
  properties: { user_id: memberIdSchema },
} as const;
export type MemberParams = FromSchema<typeof memberParamsSchema>;

export const putWorkspaceMemberBodySchema = {
  type: 'object',
  required: ['email', 'role'],
  additionalProperties: false,
  properties: {
    email: {
      type: 'string',
      minLength: 3,
      maxLength: 254,
      description: 'The member’s address (shown to the others).',
    },
    role: roleSchema,
  },
} as const;
export type PutWorkspaceMemberBody = FromSchema<typeof putWorkspaceMemberBodySchema>;

export const removeWorkspaceMemberQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    member_id: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      description: 'The dashboard user making the change; absent: the operator holding the admin token.',
    },
    reassign_to: {
      ...memberIdSchema,
      description:
        'A member who takes over the keys the removed member made; absent: those keys are revoked.',
    },
  },
} as const;
export type RemoveWorkspaceMemberQuery = FromSchema<typeof removeWorkspaceMemberQuerySchema>;

export const removedWorkspaceMemberSchema = {
  type: 'object',
  required: ['member', 'revoked_keys', 'reassigned_keys'],
  additionalProperties: false,
  properties: {
    member: workspaceMemberSchema,
    revoked_keys: {
      type: 'array',
      items: { type: 'string' },
      description: 'The ids of the keys the member made, revoked on every replica before this answered.',
    },
    reassigned_keys: {
      type: 'array',
      items: { type: 'string' },
      description: 'The ids of the keys the member made that now belong to `reassign_to`.',
    },
  },
} as const;
export type RemovedWorkspaceMember = FromSchema<typeof removedWorkspaceMemberSchema>;

export const memberWorkspacesSchema = {
  type: 'object',
  required: ['workspaces'],
  additionalProperties: false,
  properties: {
    workspaces: {
      type: 'array',
      description: 'Every workspace the person belongs to, oldest membership first.',
      items: {
        type: 'object',
        required: ['account_id', 'role', 'joined_at'],
        additionalProperties: false,
        properties: {
          account_id: { type: 'string' },
          role: roleSchema,
          joined_at: { type: 'string', format: 'date-time' },
        },
      },
    },
  },
} as const;
export type MemberWorkspaces = FromSchema<typeof memberWorkspacesSchema>;

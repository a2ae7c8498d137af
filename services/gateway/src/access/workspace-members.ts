/**
 * Who belongs to a workspace (`workspace_members` collection), beside the workspace's keys: the
 * dashboard knows the people (addresses, passwords, sessions, invitations) and asks here what role
 * someone has where; what a member may do with that role is the dashboard's role table
 * (`@subx/contracts/workspaces`). Every change is recorded in the audit log.
 *
 * Two rules hold whatever the order of concurrent calls:
 * - a workspace with members keeps at least one owner: a change that would leave none is refused,
 *   and a change that raced another into leaving none is undone (both callers are told);
 * - removing a member revokes the keys they made (on every replica, before the call answers),
 *   unless another member takes them over.
 */
import type { Clock, Collection, Doc, DocumentStore } from '@subx/ports';
import { DuplicateKeyError } from '@subx/ports';
import {
  MAX_WORKSPACE_MEMBERS,
  WORKSPACE_ROLES,
  type MemberWorkspaces,
  type PutWorkspaceMemberBody,
  type RemovedWorkspaceMember,
  type WorkspaceMember,
  type WorkspaceRole,
} from '@subx/contracts/workspaces';
import { AppError, Errors } from '@subx/errors';
import type { AccountRepository } from './accounts.ts';
import type { ApiKeys, KeyManager } from './api-keys.ts';
import type { NamedKeys } from './named-keys.ts';
import type { AuditInput, AuditLog } from '../domain/audit-log.ts';

export const WORKSPACE_MEMBERS_COLLECTION = 'workspace_members';

interface MemberDoc extends Doc {
  /** `<account id>/<member id>`: one membership per person and workspace. */
  _id: string;
  account_id: string;
  member_id: string;
  email: string;
  role: WorkspaceRole;
  joined_at: string;
}

export interface WorkspaceMembers {
  init(): Promise<void>;
  /** Owners first, then by role and joining; null for an unknown workspace. */
  list(accountId: string): Promise<WorkspaceMember[] | null>;
  /** The workspaces the person belongs to, oldest membership first. */
  workspacesOf(memberId: string): Promise<MemberWorkspaces['workspaces']>;
  /** Adds the member or changes their role; null for an unknown workspace. */
  put(
    accountId: string,
    memberId: string,
    body: PutWorkspaceMemberBody,
    by: KeyManager,
  ): Promise<{ member: WorkspaceMember; added: boolean } | null>;
  /** Null for a person who is not a member; an unknown workspace is 404 NOT_FOUND. */
  remove(
    accountId: string,
    memberId: string,
    options: { reassignTo?: string | undefined },
    by: KeyManager,
  ): Promise<RemovedWorkspaceMember | null>;
}

const ROLE_ORDER = new Map(WORKSPACE_ROLES.map((role, i) => [role, i]));

function viewOf(doc: MemberDoc): WorkspaceMember {
  return { member_id: doc.member_id, email: doc.email, role: doc.role, joined_at: doc.joined_at };
}

const lastOwner = () =>
  Errors.invalidRequest('A workspace keeps at least one owner: make another member an owner first.');
const unknownWorkspace = () => new AppError('NOT_FOUND', 'No workspace exists with this id.');

export function createWorkspaceMembers(deps: {
  store: DocumentStore;
  clock: Clock;
  accounts: Pick<AccountRepository, 'get'>;
  namedKeys: Pick<NamedKeys, 'activeMadeBy' | 'reassign'>;
  apiKeys: Pick<ApiKeys, 'revoke'>;
  audit?: AuditLog;
}): WorkspaceMembers {
  const members: Collection<MemberDoc> = deps.store.collection<MemberDoc>(WORKSPACE_MEMBERS_COLLECTION);
  const idOf = (accountId: string, memberId: string) => `${accountId}/${memberId}`;
  const owners = (accountId: string) => members.countDocuments({ account_id: accountId, role: 'owner' });

  /** Undoes a change that left the workspace without an owner (two owners demoting each other at once). */
  async function keepAnOwner(accountId: string, undo: () => Promise<unknown>): Promise<void> {
    if ((await owners(accountId)) > 0) return;
    await undo();
    throw lastOwner();
  }

  /** A change of a member, with who made it and from where. */
  async function recordChange(
    accountId: string,
    action: 'member.added' | 'member.role_changed' | 'member.removed',
    memberId: string,
    by: KeyManager,
    details: NonNullable<AuditInput['details']>,
  ): Promise<void> {
    await deps.audit?.record({
      accountId,
      action,
      actor: by.actor,
      target: { type: 'member', id: memberId },
      sourceIp: by.sourceIp ?? null,
      details,
    });
  }

  async function known(accountId: string): Promise<boolean> {
    return (await deps.accounts.get(accountId)) !== null;
  }

  const api: WorkspaceMembers = {
    async init() {
      await members.createIndex({ account_id: 1, role: 1 }, { name: 'workspace_members' });
      await members.createIndex({ member_id: 1, joined_at: 1 }, { name: 'member_workspaces' });
    },

    async list(accountId) {
      if (!(await known(accountId))) return null;
      const docs = await members.find({ account_id: accountId }, { limit: MAX_WORKSPACE_MEMBERS });
      return docs
        .sort(
          (a, b) =>
            ROLE_ORDER.get(a.role)! - ROLE_ORDER.get(b.role)! || a.joined_at.localeCompare(b.joined_at),
        )
        .map(viewOf);
    },

    async workspacesOf(memberId) {
      const docs = await members.find({ member_id: memberId }, { sort: { joined_at: 1 }, limit: 1000 });
      return docs.map((doc) => ({ account_id: doc.account_id, role: doc.role, joined_at: doc.joined_at }));
    },

    async put(accountId, memberId, body, by) {
      if (!(await known(accountId))) return null;
      const _id = idOf(accountId, memberId);
      const before = await members.findOne({ _id });
      if (!before) {
        if ((await members.countDocuments({ account_id: accountId })) >= MAX_WORKSPACE_MEMBERS) {
          throw Errors.invalidRequest(
            `The workspace has ${MAX_WORKSPACE_MEMBERS} members, the most it may have; remove one first.`,
          );
        }
        const doc: MemberDoc = {
          _id,
          account_id: accountId,
          member_id: memberId,
          email: body.email,
          role: body.role,
          joined_at: new Date(deps.clock.now()).toISOString(),
        };
        try {
          await members.insertOne(doc);
        } catch (err) {
          // Added by a concurrent call: this one changes the role as an update would.
          if (!(err instanceof DuplicateKeyError)) throw err;
          return api.put(accountId, memberId, body, by);
        }
        await recordChange(accountId, 'member.added', memberId, by, { role: body.role });
        return { member: viewOf(doc), added: true };
      }
      if (before.role === 'owner' && body.role !== 'owner' && (await owners(accountId)) <= 1)
        throw lastOwner();
      const after = await members.findOneAndUpdate(
        { _id },
        { $set: { role: body.role, email: body.email } },
        { returnDocument: 'after' },
      );
      if (!after) return api.put(accountId, memberId, body, by);
      if (before.role === 'owner' && body.role !== 'owner') {
        await keepAnOwner(accountId, () => members.updateOne({ _id }, { $set: { role: 'owner' } }));
      }
      if (before.role !== body.role) {
        await recordChange(accountId, 'member.role_changed', memberId, by, {
          from: before.role,
          to: body.role,
        });
      }
      return { member: viewOf(after), added: false };
    },

    async remove(accountId, memberId, options, by) {
      if (!(await known(accountId))) throw unknownWorkspace();
      const _id = idOf(accountId, memberId);
      const doc = await members.findOne({ _id });
      if (!doc) return null;
      const heir = options.reassignTo;
      if (heir !== undefined) {
        if (heir === memberId)
          throw Errors.invalidRequest('reassign_to: a member other than the one removed.');
        if (!(await members.findOne({ _id: idOf(accountId, heir) }))) {
          throw Errors.invalidRequest('reassign_to: not a member of this workspace.');
        }
      }
      if (doc.role === 'owner' && (await owners(accountId)) <= 1) throw lastOwner();
      if ((await members.deleteOne({ _id })).deletedCount === 0) return null;
      if (doc.role === 'owner') await keepAnOwner(accountId, () => members.insertOne(doc));

      const made = await deps.namedKeys.activeMadeBy(accountId, `member:${memberId}`);
      const revoked: string[] = [];
      const reassigned: string[] = [];
      for (const key of made) {
        if (heir !== undefined && (await deps.namedKeys.reassign(accountId, key._id, `member:${heir}`))) {
          reassigned.push(key._id);
        } else if (await deps.apiKeys.revoke(accountId, key._id, by)) {
          revoked.push(key._id);
        }
      }
      await recordChange(accountId, 'member.removed', memberId, by, {
        role: doc.role,
        revoked_keys: revoked,
        reassigned_keys: reassigned,
        reassigned_to: heir ?? null,
      });
      return { member: viewOf(doc), revoked_keys: revoked, reassigned_keys: reassigned };
    },
  };
  return api;
}

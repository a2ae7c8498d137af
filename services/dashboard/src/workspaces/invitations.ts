/**
 * Invitations to a workspace (`workspace_invitations`, in the dashboard's DocumentStore): an
 * address, the role offered, and the SHA-256 of the token the e-mailed link carries (the token
 * itself is never stored or logged). An invitation expires after INVITATION_TTL_MS and is used at
 * most once: accepting claims it in one conditional update, so of two clicks exactly one wins. A
 * new invitation of the same address to the same workspace withdraws the older one.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Collection, Doc, DocumentStore } from '@subx/ports';
import { MAX_WORKSPACE_MEMBERS, type WorkspaceRole } from '@subx/contracts/workspaces';

const INVITATIONS_COLLECTION = 'workspace_invitations';
/** How long an invitation's link works. */
export const INVITATION_TTL_MS = 7 * 24 * 3_600_000;
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export interface InvitationDoc extends Doc {
  _id: string;
  account_id: string;
  email: string;
  role: WorkspaceRole;
  token_hash: string;
  /** The member who sent it. */
  invited_by: string;
  created_at: string;
  expires_at: string;
  /** Set once: accepted (by whom) or withdrawn. */
  accepted_at: string | null;
  accepted_by: string | null;
  withdrawn_at: string | null;
}

export interface Invitations {
  init(): Promise<void>;
  /** The new invitation and its token (for the link, once). Null: the workspace has too many pending. */
  create(input: {
    accountId: string;
    email: string;
    role: WorkspaceRole;
    invitedBy: string;
  }): Promise<{ invitation: InvitationDoc; token: string } | null>;
  /** The workspace's invitations still waiting, newest first. */
  pending(accountId: string): Promise<InvitationDoc[]>;
  /** The withdrawn invitation, or null if it was not pending in this workspace. */
  withdraw(accountId: string, id: string): Promise<InvitationDoc | null>;
  /** The pending invitation of this token, or null (unknown, malformed, expired, used, withdrawn). */
  peek(token: unknown): Promise<InvitationDoc | null>;
  /** Claims the invitation for `userId`: the invitation, or null if it is no longer pending. */
  accept(token: unknown, userId: string): Promise<InvitationDoc | null>;
  /** Puts back an invitation claimed by a call that then failed (the member could not be added). */
  release(id: string): Promise<void>;
  /** Deletes every invitation of a deleted workspace (they hold the invited addresses); how many. */
  forgetWorkspace(accountId: string): Promise<number>;
}

const hashOf = (token: string) => createHash('sha256').update(token).digest('base64url');

export function createInvitations(store: DocumentStore, now: () => number): Invitations {
  const invitations: Collection<InvitationDoc> = store.collection<InvitationDoc>(INVITATIONS_COLLECTION);
  const nowIso = () => new Date(now()).toISOString();
  const pendingFilter = () => ({ accepted_at: null, withdrawn_at: null, expires_at: { $gt: nowIso() } });

  return {
    async init() {
      await invitations.createIndex({ token_hash: 1 }, { unique: true, name: 'invitation_token' });
      await invitations.createIndex({ account_id: 1, created_at: -1 }, { name: 'workspace_invitations' });
    },

    async create({ accountId, email, role, invitedBy }) {
      const waiting = await invitations.countDocuments({ account_id: accountId, ...pendingFilter() });
      if (waiting >= MAX_WORKSPACE_MEMBERS) return null;
      const older = await invitations.find(
        { account_id: accountId, email, ...pendingFilter() },
        { limit: 100 },
      );
      for (const doc of older)
        await invitations.updateOne({ _id: doc._id }, { $set: { withdrawn_at: nowIso() } });
      const token = randomBytes(32).toString('base64url');
      const at = now();
      const invitation: InvitationDoc = {
        _id: `inv_${randomBytes(12).toString('hex')}`,
        account_id: accountId,
        email,
        role,
        token_hash: hashOf(token),
        invited_by: invitedBy,
        created_at: new Date(at).toISOString(),
        expires_at: new Date(at + INVITATION_TTL_MS).toISOString(),
        accepted_at: null,
        accepted_by: null,
        withdrawn_at: null,
      };
      await invitations.insertOne(invitation);
      return { invitation, token };
    },

    pending: (accountId) =>
      invitations.find(
        { account_id: accountId, ...pendingFilter() },
        { sort: { created_at: -1 }, limit: MAX_WORKSPACE_MEMBERS },
      ),

    withdraw: (accountId, id) =>
      invitations.findOneAndUpdate(
        { _id: id, account_id: accountId, ...pendingFilter() },
        { $set: { withdrawn_at: nowIso() } },
        { returnDocument: 'after' },
      ),

    async peek(token) {
      if (typeof token !== 'string' || !TOKEN_PATTERN.test(token)) return null;
      return invitations.findOne({ token_hash: hashOf(token), ...pendingFilter() });
    },

    async accept(token, userId) {
      if (typeof token !== 'string' || !TOKEN_PATTERN.test(token)) return null;
      return invitations.findOneAndUpdate(
        { token_hash: hashOf(token), ...pendingFilter() },
        { $set: { accepted_at: nowIso(), accepted_by: userId } },
        { returnDocument: 'after' },
      );
    },

    async release(id) {
      await invitations.updateOne({ _id: id }, { $set: { accepted_at: null, accepted_by: null } });
    },

    async forgetWorkspace(accountId) {
      return (await invitations.deleteMany({ account_id: accountId })).deletedCount;
    },
  };
}

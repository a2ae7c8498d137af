/**
 * People who sign in to the dashboard, in the DocumentStore (`dashboard_users`, MongoDB in
 * deployments): email (unique, lower-cased), scrypt password hash, verification, the gateway
 * account they own, and the operator flag. API keys are not here: they are the gateway's.
 */
import { randomUUID } from 'node:crypto';
import type { Collection, Doc, DocumentStore } from '@subx/ports';
import { DuplicateKeyError } from '@subx/ports';

export interface UserDoc extends Doc {
  _id: string;
  email: string;
  password_hash: string;
  email_verified: boolean;
  /** The gateway account (created when the email is verified). */
  account_id: string | null;
  /** Promoted through the dashboard's admin route; OPERATOR_EMAILS also grant the role. */
  operator: boolean;
  /** Sessions carry the epoch they were created in; a password reset increments it, voiding them all. */
  session_epoch: number;
  created_at: string;
}

export const USERS_COLLECTION = 'dashboard_users';
const MAX_EMAIL_LENGTH = 254;

/**
 * The plain form of an address: a local part of RFC 5322 atoms and dots, a domain of DNS labels.
 * Comments (`v@x.com(1)`), quoted local parts, IP-literal domains and route syntax are refused:
 * mail servers deliver such forms to an inbox another spelling already names, so each spelling
 * would pass the per-address mail caps and count as a separate account.
 */
const PLAIN_ADDRESS =
  /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/;

/** Lower-cased plain address, or null when it is not one (the link proves the mailbox). */
export function normalizeEmail(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const email = value.trim().toLowerCase();
  if (email.length > MAX_EMAIL_LENGTH || !PLAIN_ADDRESS.test(email)) return null;
  return email;
}

export interface UserRepository {
  init(): Promise<void>;
  /** Null when the email is taken. */
  create(email: string, passwordHash: string, now: number): Promise<UserDoc | null>;
  byEmail(email: string): Promise<UserDoc | null>;
  byId(id: string): Promise<UserDoc | null>;
  update(id: string, set: Partial<Omit<UserDoc, '_id' | 'email' | 'session_epoch'>>): Promise<void>;
  /** Ends every session of this user (they carry the old epoch). */
  endSessions(id: string): Promise<void>;
  /**
   * A new sign-up for an address nobody has confirmed, and whose confirmation link has expired,
   * takes the pending account over: the new password replaces the old one and every session of
   * the old one ends. The stored user, or null when the address is confirmed (nothing changes).
   */
  replacePending(email: string, passwordHash: string): Promise<UserDoc | null>;
  /** Sets the account only if none is set yet; returns the user as stored afterwards. */
  attachAccount(id: string, accountId: string): Promise<UserDoc | null>;
  /** Everyone of a deleted workspace is left without one (`account_id` null); how many. */
  detachAccount(accountId: string): Promise<number>;
  list(options: { skip: number; limit: number }): Promise<UserDoc[]>;
  count(): Promise<number>;
}

export function createUserRepository(store: DocumentStore): UserRepository {
  const users: Collection<UserDoc> = store.collection<UserDoc>(USERS_COLLECTION);
  return {
    async init() {
      await users.createIndex({ email: 1 }, { unique: true, name: 'email_unique' });
    },
    async create(email, passwordHash, now) {
      const doc: UserDoc = {
        _id: `usr_${randomUUID().replaceAll('-', '')}`,
        email,
        password_hash: passwordHash,
        email_verified: false,
        account_id: null,
        operator: false,
        session_epoch: 0,
        created_at: new Date(now).toISOString(),
      };
      try {
        await users.insertOne(doc);
        return doc;
      } catch (err) {
        if (err instanceof DuplicateKeyError) return null;
        throw err;
      }
    },
    byEmail: (email) => users.findOne({ email }),
    byId: (id) => users.findOne({ _id: id }),
    async update(id, set) {
      await users.updateOne({ _id: id }, { $set: set });
    },
    async endSessions(id) {
      await users.updateOne({ _id: id }, { $inc: { session_epoch: 1 } });
    },
    replacePending: (email, passwordHash) =>
      users.findOneAndUpdate(
        { email, email_verified: false },
        { $set: { password_hash: passwordHash }, $inc: { session_epoch: 1 } },
        { returnDocument: 'after' },
      ),
    async attachAccount(id, accountId) {
      await users.updateOne({ _id: id, account_id: null }, { $set: { account_id: accountId } });
      return users.findOne({ _id: id });
    },
    async detachAccount(accountId) {
      // A workspace has a handful of people; the bound only keeps a broken store from looping.
      const members = await users.find({ account_id: accountId }, { limit: 10_000 });
      for (const member of members) {
        await users.updateOne({ _id: member._id, account_id: accountId }, { $set: { account_id: null } });
      }
      return members.length;
    },
    list: ({ skip, limit }) => users.find({}, { sort: { created_at: -1 }, skip, limit }),
    count: () => users.countDocuments({}),
  };
}

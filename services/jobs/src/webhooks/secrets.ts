/**
 * Per-account signing secrets in the DocumentStore, one document per account (`_id` = account id)
 * in `webhook_secrets`. A rotation makes a new secret current and keeps the old one as `previous`
 * for 24 hours, during which deliveries carry both signatures: a receiver that has not
 * switched yet still verifies. No transactions: every change is one conditional update on the
 * document's `version`, retried a few times if another replica changed it in between.
 *
 * Secrets are stored sealed (secret-box.ts); they are returned to the account's own key (the
 * public route) or the admin token (the dashboard), and never logged. While the pepper is being
 * rotated, a secret sealed under the previous pepper is sealed again under the new one when it is
 * read (one conditional update), so it survives the previous pepper being dropped.
 *
 * After a compromise (a password reset, a key revoked by the operator for it) the rotation keeps
 * nothing: whoever read the old secret can no longer sign or verify a delivery with it.
 */
import { DuplicateKeyError } from '@subx/ports';
import type { Clock, DocumentStore } from '@subx/ports';
import { generateSigningSecret } from '@subx/webhooks';
import { createRotatingSecretBox } from './secret-box.ts';

export const WEBHOOK_SECRETS_COLLECTION = 'webhook_secrets';
/** How long the previous secret keeps signing after a rotation. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 3_600_000;
const MAX_CONFLICT_RETRIES = 5;

interface SealedSecret {
  sealed: string;
  created_at: number;
}

interface WebhookSecretDoc {
  _id: string;
  current: SealedSecret;
  previous: SealedSecret | null;
  previous_expires_at: number | null;
  version: number;
  [key: string]: unknown;
}

/** The answer of the secret routes (public and admin). */
interface WebhookSecretView {
  secret: string;
  created_at: string;
  /** Until when the previous secret also signs; null when there is none (or it has expired). */
  previous_secret_expires_at: string | null;
}

/** What the account's export says of the secret: never the secret itself. */
interface WebhookSecretMetadata {
  exists: boolean;
  created_at: string | null;
  previous_secret_expires_at: string | null;
}

export interface WebhookSecrets {
  /** The current secret, created on first need. */
  current(accountId: string): Promise<WebhookSecretView>;
  /** Whether the account has a secret and its dates; nothing is created or opened. */
  metadata(accountId: string): Promise<WebhookSecretMetadata>;
  /**
   * A new current secret; the old one signs alongside until `previous_secret_expires_at`, or,
   * with `keepPrevious: false` (a compromise), not at all: every older secret is dropped.
   */
  rotate(accountId: string, options?: { keepPrevious?: boolean }): Promise<WebhookSecretView>;
  /** Every secret that signs now, newest first (created on first need). */
  signingSecrets(accountId: string): Promise<string[]>;
}

export function createWebhookSecrets(deps: {
  store: DocumentStore;
  clock: Clock;
  pepper: string;
  /** API_KEY_PEPPER_PREVIOUS while the pepper is rotated: secrets sealed under it still open. */
  previousPepper?: string;
}): WebhookSecrets {
  const { clock } = deps;
  const box = createRotatingSecretBox(deps.pepper, deps.previousPepper);
  const docs = deps.store.collection<WebhookSecretDoc>(WEBHOOK_SECRETS_COLLECTION);

  const seal = (accountId: string): SealedSecret => ({
    sealed: box.seal(generateSigningSecret(), accountId),
    created_at: clock.now(),
  });

  function open(doc: WebhookSecretDoc, which: SealedSecret): string {
    try {
      return box.openAny(which.sealed, doc._id).plaintext;
    } catch (cause) {
      // Most likely API_KEY_PEPPER changed (or, embedded, was generated anew at a restart with a
      // persistent store): the secret cannot be recovered; a rotation issues a readable one.
      throw new Error(
        `webhook secret of account ${doc._id} cannot be decrypted (was API_KEY_PEPPER changed?); rotate it`,
        { cause },
      );
    }
  }

  function readable(doc: WebhookSecretDoc, which: SealedSecret): boolean {
    try {
      box.openAny(which.sealed, doc._id);
      return true;
    } catch {
      return false;
    }
  }

  /** The same secret sealed under the current pepper, or null when it already is (or opens under none). */
  function resealed(doc: WebhookSecretDoc, which: SealedSecret): SealedSecret | null {
    try {
      const { plaintext, stale } = box.openAny(which.sealed, doc._id);
      return stale ? { sealed: box.seal(plaintext, doc._id), created_at: which.created_at } : null;
    } catch {
      return null;
    }
  }

  /**
   * Seals again under the current pepper what is still under the previous one. A conflicting
   * change (a rotation meanwhile) wins; the next read tries again.
   */
  async function refreshed(doc: WebhookSecretDoc): Promise<WebhookSecretDoc> {
    const current = resealed(doc, doc.current);
    const previous = doc.previous ? resealed(doc, doc.previous) : null;
    if (!current && !previous) return doc;
    const next = {
      current: current ?? doc.current,
      previous: previous ?? doc.previous,
      version: doc.version + 1,
    };
    const { matchedCount } = await docs.updateOne({ _id: doc._id, version: doc.version }, { $set: next });
    return matchedCount > 0 ? { ...doc, ...next } : doc;
  }

  const previousValid = (doc: WebhookSecretDoc) =>
    doc.previous !== null && doc.previous_expires_at !== null && doc.previous_expires_at > clock.now();

  function view(doc: WebhookSecretDoc): WebhookSecretView {
    return {
      secret: open(doc, doc.current),
      created_at: new Date(doc.current.created_at).toISOString(),
      previous_secret_expires_at: previousValid(doc)
        ? new Date(doc.previous_expires_at!).toISOString()
        : null,
    };
  }

  /** Inserts a first secret; null when another replica inserted one at the same moment. */
  async function create(accountId: string): Promise<WebhookSecretDoc | null> {
    const doc: WebhookSecretDoc = {
      _id: accountId,
      current: seal(accountId),
      previous: null,
      previous_expires_at: null,
      version: 1,
    };
    try {
      await docs.insertOne(doc);
      return doc;
    } catch (error) {
      if (error instanceof DuplicateKeyError) return null;
      throw error;
    }
  }

  async function load(accountId: string): Promise<WebhookSecretDoc> {
    for (let i = 0; i < MAX_CONFLICT_RETRIES; i++) {
      const found = await docs.findOne({ _id: accountId });
      if (found) return refreshed(found);
      const created = await create(accountId);
      if (created) return created;
    }
    throw new Error(`webhook secret of account ${accountId}: too many concurrent changes`);
  }

  return {
    async current(accountId) {
      return view(await load(accountId));
    },
    async metadata(accountId) {
      const doc = await docs.findOne({ _id: accountId });
      if (!doc) return { exists: false, created_at: null, previous_secret_expires_at: null };
      return {
        exists: true,
        created_at: new Date(doc.current.created_at).toISOString(),
        previous_secret_expires_at: previousValid(doc)
          ? new Date(doc.previous_expires_at!).toISOString()
          : null,
      };
    },
    async rotate(accountId, options = {}) {
      for (let i = 0; i < MAX_CONFLICT_RETRIES; i++) {
        const doc = await docs.findOne({ _id: accountId });
        if (!doc) {
          // The first secret of the account: nothing to keep alongside it.
          const created = await create(accountId);
          if (created) return view(created);
          continue;
        }
        const now = clock.now();
        // A current secret that no longer opens (the pepper changed) cannot sign alongside: the
        // rotation is then the way out, and it keeps nothing.
        const keep = options.keepPrevious !== false && readable(doc, doc.current);
        const rotated = await docs.findOneAndUpdate(
          { _id: accountId, version: doc.version },
          {
            $set: {
              current: seal(accountId),
              previous: keep ? (resealed(doc, doc.current) ?? doc.current) : null,
              previous_expires_at: keep ? now + PREVIOUS_SECRET_GRACE_MS : null,
              version: doc.version + 1,
            },
          },
          { returnDocument: 'after' },
        );
        if (rotated) return view(rotated);
      }
      throw new Error(`webhook secret of account ${accountId}: too many concurrent rotations`);
    },
    async signingSecrets(accountId) {
      const doc = await load(accountId);
      const secrets = [open(doc, doc.current)];
      if (previousValid(doc)) secrets.push(open(doc, doc.previous!));
      return secrets;
    },
  };
}

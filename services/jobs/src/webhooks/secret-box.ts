/**
 * Signing secrets at rest: AES-256-GCM under a key derived with HKDF-SHA256 from the gateway's
 * API_KEY_PEPPER (the one secret every replica already shares), so a copy of the database alone
 * does not let anyone sign webhooks as us. The account id is the additional authenticated data: a
 * ciphertext moved to another account's document does not decrypt.
 *
 * Format: `v1.<iv>.<tag>.<ciphertext>`, each part base64url; the version names the key derivation
 * so a future change can still read old documents.
 *
 * Rotating the pepper (docs/operations.md "Rotating secrets"): while API_KEY_PEPPER_PREVIOUS is
 * set, a secret that does not open under the new pepper is opened under the previous one, and the
 * caller is told so (`stale`) to seal it again under the new pepper; a secret read during the
 * window keeps opening once the previous pepper is dropped.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const SALT = 'subx/webhook-secrets';
const INFO = 'webhook signing secret encryption v1';

export interface SecretBox {
  seal(plaintext: string, accountId: string): string;
  /** Throws when the ciphertext was not sealed under this pepper for this account. */
  open(sealed: string, accountId: string): string;
}

export interface RotatingSecretBox extends SecretBox {
  /**
   * Opens under the current pepper, else under the previous one; `stale` says the second: the
   * caller seals the plaintext again under the current pepper. Throws when neither opens it.
   */
  openAny(sealed: string, accountId: string): { plaintext: string; stale: boolean };
}

/** Seals under `pepper`; opens under it or, while a rotation is under way, `previousPepper`. */
export function createRotatingSecretBox(pepper: string, previousPepper?: string): RotatingSecretBox {
  const current = createSecretBox(pepper);
  const previous = previousPepper ? createSecretBox(previousPepper) : null;
  return {
    seal: current.seal,
    open: (sealed, accountId) => current.open(sealed, accountId),
    openAny(sealed, accountId) {
      try {
        return { plaintext: current.open(sealed, accountId), stale: false };
      } catch (error) {
        if (!previous) throw error;
        return { plaintext: previous.open(sealed, accountId), stale: true };
      }
    },
  };
}

export function createSecretBox(pepper: string): SecretBox {
  if (pepper.length === 0) throw new Error('createSecretBox: empty pepper');
  const key = Buffer.from(hkdfSync('sha256', pepper, SALT, INFO, 32));
  return {
    seal(plaintext, accountId) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(accountId, 'utf8'));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const parts = [iv, cipher.getAuthTag(), body].map((b) => b.toString('base64url'));
      return `v1.${parts.join('.')}`;
    },
    open(sealed, accountId) {
      const [version, iv, tag, body] = sealed.split('.');
      if (version !== 'v1' || !iv || !tag || body === undefined) {
        throw new Error('webhook secret: unknown ciphertext format');
      }
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(accountId, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString(
        'utf8',
      );
    },
  };
}

/**
 * Signing secrets at rest: AES-256-GCM under a key derived with HKDF-SHA256 from the gateway's
 * API_KEY_PEPPER (the one secret every replica already shares), so a copy of the database alone
 * does not let anyone sign webhooks as us. The account id is the additional authenticated data: a
 * ciphertext moved to another account's document does not decrypt.
 *
 * Format: `v1.<iv>.<tag>.<ciphertext>`, each part base64url; the version names the key derivation
 * so a future change can still read old documents.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const SALT = 'subx/webhook-secrets';
const INFO = 'webhook signing secret encryption v1';

export interface SecretBox {
  seal(plaintext: string, accountId: string): string;
  /** Throws when the ciphertext was not sealed under this pepper for this account. */
  open(sealed: string, accountId: string): string;
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

/**
 * Taking an account back after its password or API key leaked (a password reset, or an operator
 * who revokes a key for compromise). Revoking the key alone leaves what the intruder set going:
 * watches that keep running on the owner's credits, jobs waiting in the queue, and the webhook
 * signing secret they may have read, with which they can forge or verify deliveries. So, in this
 * order:
 *
 * 1. pause the watches and cancel the queued and running jobs the key created (each carries the
 *    key's id, accounts.ts keyIdOf), and those of every named key;
 * 2. revoke every named key (whoever held the account could have made them), then replace or
 *    revoke the primary key;
 * 3. look again for what the key made between 1 and 2 (a request admitted just before the change);
 * 4. replace the webhook secret, keeping no previous one signing alongside.
 *
 * Every step is safe to repeat, and the key is changed only after step 1 succeeded: a failure
 * leaves the key as it was, and the caller (the dashboard keeps the reset link usable) tries again.
 */
import type { AccountRepository } from '../access/accounts.ts';
import { keyIdOf } from '../access/accounts.ts';
import type { JobsApi, WatchesApi, WebhookSecretsApi } from '@subx/backends';
import type { ApiKeys } from '../access/api-keys.ts';

interface SecuredAccount {
  /** The new key (`replace` of an active key), shown once; null otherwise. */
  api_key: string | null;
  webhook_secret_rotated: boolean;
  paused_watches: string[];
  canceled_jobs: string[];
  revoked_keys: string[];
}

export type AccountSecurer = (accountId: string, key: 'replace' | 'revoke') => Promise<SecuredAccount | null>;

export function createAccountSecurer(deps: {
  accounts: Pick<AccountRepository, 'get' | 'regenerateKey' | 'revokeKey'>;
  /** The account's named keys; absent: it has none to revoke. */
  apiKeys?: Pick<ApiKeys, 'list' | 'revoke'>;
  /** Absent on a gateway without that feature: nothing of its kind can exist. */
  jobs?: Pick<JobsApi, 'cancelCreatedWith'>;
  watches?: Pick<WatchesApi, 'pauseCreatedWith'>;
  webhookSecrets?: Pick<WebhookSecretsApi, 'rotate'>;
}): AccountSecurer {
  const { accounts, apiKeys, jobs, watches, webhookSecrets } = deps;

  async function stopWhatTheKeyMade(accountId: string, keyId: string, into: SecuredAccount) {
    // Watches first: a watch run between the two would start another job of the key.
    if (watches) into.paused_watches.push(...(await watches.pauseCreatedWith(accountId, keyId)));
    if (jobs) into.canceled_jobs.push(...(await jobs.cancelCreatedWith(accountId, keyId)));
  }

  return async (accountId, key) => {
    const doc = await accounts.get(accountId);
    if (!doc) return null;
    const keyId = keyIdOf(doc.key);
    const secured: SecuredAccount = {
      api_key: null,
      webhook_secret_rotated: false,
      paused_watches: [],
      canceled_jobs: [],
      revoked_keys: [],
    };
    const named = ((await apiKeys?.list(accountId)) ?? []).filter(
      (k) => !k.primary && k.status !== 'revoked',
    );
    for (const id of [keyId, ...named.map((k) => k.id)]) await stopWhatTheKeyMade(accountId, id, secured);
    for (const { id } of named) {
      await apiKeys!.revoke(accountId, id, { actor: { type: 'operator', id: null } });
      secured.revoked_keys.push(id);
    }
    if (doc.key.status === 'active') {
      if (key === 'replace') secured.api_key = await accounts.regenerateKey(accountId);
      else await accounts.revokeKey(accountId);
    }
    for (const id of [keyId, ...named.map((k) => k.id)]) await stopWhatTheKeyMade(accountId, id, secured);
    if (webhookSecrets) {
      await webhookSecrets.rotate(accountId, { keepPrevious: false });
      secured.webhook_secret_rotated = true;
    }
    return secured;
  };
}

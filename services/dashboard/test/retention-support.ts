/**
 * The fake gateway's data retention (support.ts builds the fake with it): the settings per account
 * and the rules the gateway's admin API enforces (`@subx/contracts/retention`), so that a route test
 * through the fake tells what the real one answers: past the tier's cap, 400 INVALID_REQUEST with
 * the gateway's message naming the field and the cap.
 */
import {
  RETENTION_CAPS,
  RETENTION_FIELDS,
  effectiveRetention,
  retentionProblem,
  type StoredRetention,
} from '@subx/contracts/retention';
import type { GatewayAccount, GatewayClient, RetentionSettings } from '../src/gateway/client.ts';
import { GatewayError } from '../src/gateway/client.ts';

type RetentionMethods = Pick<GatewayClient, 'retention' | 'updateRetention'>;

export function fakeRetention(accountOf: (id: string) => GatewayAccount) {
  const stored = new Map<string, StoredRetention>();
  /** Every change as the admin API received it, with the member who made it. */
  const changes: { id: string; change: Record<string, number | null>; memberId: string }[] = [];

  const view = (id: string): RetentionSettings => {
    const account = accountOf(id);
    const settings = stored.get(id);
    return {
      account_id: id,
      tier: account.tier,
      ...effectiveRetention(account.tier, settings),
      caps: { ...RETENTION_CAPS[account.tier] },
      updated_at: settings ? new Date(settings.changed_at).toISOString() : null,
    };
  };

  const methods: RetentionMethods = {
    async retention(id) {
      return view(id);
    },
    async updateRetention(id, change, memberId) {
      const account = accountOf(id);
      const problem = retentionProblem(account.tier, change);
      if (problem) throw new GatewayError(400, 'INVALID_REQUEST', problem.message);
      const next: StoredRetention = { ...stored.get(id), changed_at: Date.now() };
      for (const name of RETENTION_FIELDS) {
        const days = change[name];
        if (days === null) delete next[name];
        else if (days !== undefined) next[name] = days;
      }
      stored.set(id, next);
      changes.push({ id, change: { ...change }, memberId });
      return view(id);
    },
  };
  return { methods, stored, changes };
}

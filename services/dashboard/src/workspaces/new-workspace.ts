/**
 * A new workspace for a person: the gateway account, the key it comes with revoked (nobody has
 * seen it, so the first key is the one the person generates and sees), and the person as its
 * first owner. Confirming an address and "Start a workspace of my own" both make one this way.
 */
import type { GatewayClient } from '../gateway/client.ts';

export async function startWorkspace(
  gateway: GatewayClient,
  person: { _id: string; email: string },
): Promise<string> {
  const { account_id: accountId } = await gateway.createAccount(person.email);
  await gateway.revokeKey(accountId);
  await gateway.putMember(accountId, person._id, { email: person.email, role: 'owner' }, person._id);
  return accountId;
}

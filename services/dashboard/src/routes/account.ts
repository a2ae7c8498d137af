/** The signed-in person's gateway account: null before the address is confirmed (no account yet). */
import type { FastifyRequest } from 'fastify';
import type { GatewayAccount } from '../gateway/client.ts';
import { signedInUser } from '../auth/guards.ts';

export async function accountOf(request: FastifyRequest): Promise<GatewayAccount | null> {
  const user = signedInUser(request);
  return user.email_verified && user.account_id ? request.gateway.getAccount(user.account_id) : null;
}

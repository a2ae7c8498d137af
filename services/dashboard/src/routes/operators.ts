/**
 * Operator pages and actions (behind the `operator` guard: role, confirmed address, recent
 * password): every person with their account, tier, credits and key; change a tier, add credits,
 * revoke a key. Each action is an audit event.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { plural } from '@subx/errors';
import type { Tier } from '../gateway/client.ts';
import { TIERS } from '../gateway/client.ts';
import { field, formSchema } from '../views/forms.ts';
import type { Notice, OperatorRow } from '../views/pages.ts';
import { operatorsPage } from '../views/pages.ts';
import { signedInUser } from '../auth/guards.ts';
import type { DashboardServices } from '../services.ts';
import type { UserDoc } from '../auth/users.ts';

const OPERATORS_PAGE_SIZE = 25;
const accountForm = formSchema('tier', 'add_credits');
const actorOf = (user: UserDoc) => ({ email: user.email, user_id: user._id });

export default async function operatorRoutes(app: FastifyInstance, s: DashboardServices) {
  const { users, audit } = s;
  const guarded = { config: { permission: 'operator' as const }, preHandler: s.guards.operator };

  async function operatorsView(
    request: FastifyRequest,
    reply: FastifyReply,
    pageNumber: number,
    notice?: Notice,
    status = 200,
  ) {
    const total = await users.count();
    const pages = Math.max(1, Math.ceil(total / OPERATORS_PAGE_SIZE));
    const number = Math.min(Math.max(1, pageNumber), pages);
    const list = await users.list({ skip: (number - 1) * OPERATORS_PAGE_SIZE, limit: OPERATORS_PAGE_SIZE });
    const rows: OperatorRow[] = await Promise.all(
      list.map(async (user) => ({
        user,
        account: user.account_id ? await request.gateway.getAccount(user.account_id).catch(() => null) : null,
      })),
    );
    return reply.page((ctx) => operatorsPage(ctx, rows, { number, pages, total }, notice), status);
  }

  app.get('/operators', guarded, async (request, reply) => {
    const n = Number((request.query as Record<string, unknown>).page ?? 1);
    return operatorsView(request, reply, Number.isSafeInteger(n) ? n : 1);
  });

  app.post(
    '/operators/accounts/:id',
    { ...guarded, schema: { body: accountForm } },
    async (request, reply) => {
      const operator = signedInUser(request);
      const id = (request.params as { id: string }).id;
      const tier = field(request.body, 'tier');
      const addRaw = field(request.body, 'add_credits').trim() || '0';
      const add = /^\d{1,9}$/.test(addRaw) ? Number(addRaw) : NaN;
      if (!(TIERS as readonly string[]).includes(tier) || Number.isNaN(add)) {
        const text = 'Choose a tier and a whole number of credits.';
        return operatorsView(request, reply, 1, { kind: 'error', text }, 400);
      }
      await request.gateway.updateAccount(id, {
        tier: tier as Tier,
        ...(add > 0 ? { add_credits: add } : {}),
      });
      audit('operator.account_updated', {
        actor: actorOf(operator),
        target: { account_id: id },
        details: { tier, add_credits: add },
      });
      return operatorsView(request, reply, 1, { kind: 'ok', text: `Saved ${id}.` });
    },
  );

  app.post(
    '/operators/accounts/:id/revoke',
    { ...guarded, schema: { body: formSchema() } },
    async (request, reply) => {
      const id = (request.params as { id: string }).id;
      // An operator revokes a key for compromise or abuse: what it set going stops with it.
      const secured = await request.gateway.secureAccount(id, 'revoke');
      const stopped = {
        watches_paused: secured.paused_watches.length,
        jobs_canceled: secured.canceled_jobs.length,
      };
      audit('operator.key_revoked', {
        actor: actorOf(signedInUser(request)),
        target: { account_id: id },
        details: stopped,
      });
      const text = `Revoked the key of ${id}: ${plural(stopped.watches_paused, 'watch', 'watches')} paused, ${plural(stopped.jobs_canceled, 'job')} canceled, webhook secret replaced.`;
      return operatorsView(request, reply, 1, { kind: 'ok', text });
    },
  );
}

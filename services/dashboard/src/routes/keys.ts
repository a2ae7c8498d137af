/**
 * The API key: generate (once, after the address is confirmed), regenerate and revoke (each behind
 * a ticked confirmation box). A new key is rendered into that one response only: no redirect, no
 * storage, so it is shown once.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { field, formSchema } from '../forms.ts';
import type { Notice } from '../pages.ts';
import { keysPage } from '../pages.ts';
import type { DashboardServices } from '../services.ts';
import { accountOf } from './account.ts';

const confirmForm = formSchema('confirm');
const ok = (text: string): Notice => ({ kind: 'ok', text });

export default async function keyRoutes(app: FastifyInstance, s: DashboardServices) {
  const { guards } = s;
  const confirmFirst = guards.confirmed(async (_request, reply) =>
    reply.page((ctx) => keysPage(ctx, null, null, { kind: 'error', text: 'Confirm your email first.' }), 403),
  );

  app.get(
    '/keys',
    {
      preHandler: guards.confirmed(async (_request, reply) => reply.page((ctx) => keysPage(ctx, null, null))),
    },
    async (request, reply) => {
      const account = await accountOf(request);
      return reply.page((ctx) => keysPage(ctx, account, null));
    },
  );

  async function issueKey(request: FastifyRequest, reply: FastifyReply, mode: 'generate' | 'regenerate') {
    const current = await accountOf(request);
    if (!current) {
      return reply.page(
        (ctx) => keysPage(ctx, null, null, { kind: 'error', text: 'Confirm your email first.' }),
        403,
      );
    }
    if (mode === 'regenerate' && field(request.body, 'confirm') !== 'yes') {
      return reply.page(
        (ctx) => keysPage(ctx, current, null, { kind: 'error', text: 'Tick the box to confirm.' }),
        400,
      );
    }
    if (mode === 'generate' && current.key.status === 'active') {
      const text = 'You already have a key: regenerate it instead.';
      return reply.page((ctx) => keysPage(ctx, current, null, { kind: 'error', text }), 409);
    }
    const apiKey = await request.gateway.issueKey(current.account_id);
    const account = await request.gateway.getAccount(current.account_id);
    const notice = ok(
      mode === 'generate'
        ? 'Your API key is ready.'
        : 'Your key was regenerated; the previous key no longer works.',
    );
    // Rendered into this response only (no redirect, no storage): the key is shown once.
    return reply.page((ctx) => keysPage(ctx, account, apiKey, notice));
  }

  const keyForm = { schema: { body: confirmForm }, preHandler: confirmFirst };
  app.post('/keys/generate', keyForm, (request, reply) => issueKey(request, reply, 'generate'));
  app.post('/keys/regenerate', keyForm, (request, reply) => issueKey(request, reply, 'regenerate'));

  app.post(
    '/keys/revoke',
    {
      schema: { body: confirmForm },
      preHandler: guards.confirmed(async (_request, reply) => reply.redirect('/keys', 303)),
    },
    async (request, reply) => {
      const current = await accountOf(request);
      if (!current) return reply.redirect('/keys', 303);
      if (field(request.body, 'confirm') !== 'yes') {
        return reply.page(
          (ctx) => keysPage(ctx, current, null, { kind: 'error', text: 'Tick the box to confirm.' }),
          400,
        );
      }
      await request.gateway.revokeKey(current.account_id);
      const account = await request.gateway.getAccount(current.account_id);
      return reply.page((ctx) => keysPage(ctx, account, null, ok('Your key is revoked.')));
    },
  );
}

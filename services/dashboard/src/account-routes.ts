/**
 * The signed-in pages: the API key (generate, regenerate, revoke), usage, and the playground. No
 * key before the address is confirmed (issue 19): the gateway account exists only from then on.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { GatewayAccount, GatewayClient } from './gateway-client.ts';
import type { Notice, PageContext, PlaygroundInput } from './pages.ts';
import { FORMATS, keysPage, playgroundPage, usagePage } from './pages.ts';
import type { UserDoc } from './users.ts';

const DAY_MS = 86_400_000;

export interface AccountRouteDeps {
  gateway: GatewayClient;
  now: () => number;
  /** The gateway URL shown in the playground's curl. */
  apiUrl: string;
  field(body: unknown, name: string): string;
  page(
    request: FastifyRequest,
    reply: FastifyReply,
    render: (ctx: PageContext) => string,
    status?: number,
  ): Promise<FastifyReply>;
  requireUser(request: FastifyRequest, reply: FastifyReply): UserDoc | null;
}

export function registerAccountRoutes(app: FastifyInstance, deps: AccountRouteDeps): void {
  const { gateway, now, apiUrl, field, page, requireUser } = deps;

  /** The signed-in person's gateway account, or null before verification. */
  async function accountOf(user: UserDoc): Promise<GatewayAccount | null> {
    return user.account_id ? gateway.getAccount(user.account_id) : null;
  }

  const keyNotice = (text: string): Notice => ({ kind: 'ok', text });

  app.get('/keys', async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    const account = user.email_verified ? await accountOf(user) : null;
    return page(request, reply, (ctx) => keysPage(ctx, account, null));
  });

  async function issueKey(request: FastifyRequest, reply: FastifyReply, mode: 'generate' | 'regenerate') {
    const user = requireUser(request, reply);
    if (!user) return reply;
    const current = user.email_verified ? await accountOf(user) : null;
    if (!current)
      return page(
        request,
        reply,
        (ctx) => keysPage(ctx, null, null, { kind: 'error', text: 'Confirm your email first.' }),
        403,
      );
    if (mode === 'regenerate' && field(request.body, 'confirm') !== 'yes') {
      return page(
        request,
        reply,
        (ctx) => keysPage(ctx, current, null, { kind: 'error', text: 'Tick the box to confirm.' }),
        400,
      );
    }
    if (mode === 'generate' && current.key.status === 'active') {
      return page(
        request,
        reply,
        (ctx) =>
          keysPage(ctx, current, null, {
            kind: 'error',
            text: 'You already have a key: regenerate it instead.',
          }),
        409,
      );
    }
    const apiKey = await gateway.issueKey(current.account_id);
    const account = await gateway.getAccount(current.account_id);
    const notice = keyNotice(
      mode === 'generate'
        ? 'Your API key is ready.'
        : 'Your key was regenerated; the previous key no longer works.',
    );
    // Rendered into this response only (no redirect, no storage): the key is shown once.
    return page(request, reply, (ctx) => keysPage(ctx, account, apiKey, notice));
  }

  app.post('/keys/generate', (request, reply) => issueKey(request, reply, 'generate'));
  app.post('/keys/regenerate', (request, reply) => issueKey(request, reply, 'regenerate'));

  app.post('/keys/revoke', async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    const current = user.email_verified ? await accountOf(user) : null;
    if (!current) return reply.redirect('/keys', 303);
    if (field(request.body, 'confirm') !== 'yes') {
      return page(
        request,
        reply,
        (ctx) => keysPage(ctx, current, null, { kind: 'error', text: 'Tick the box to confirm.' }),
        400,
      );
    }
    await gateway.revokeKey(current.account_id);
    const account = await gateway.getAccount(current.account_id);
    return page(request, reply, (ctx) => keysPage(ctx, account, null, keyNotice('Your key is revoked.')));
  });

  app.get('/usage', async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    if (!user.email_verified || !user.account_id) return page(request, reply, (ctx) => usagePage(ctx, null));
    const today = new Date(now()).toISOString().slice(0, 10);
    const from = new Date(Date.parse(today) - 29 * DAY_MS).toISOString().slice(0, 10);
    const [limits, usage] = await Promise.all([
      gateway.limits(user.account_id),
      gateway.usage(user.account_id, from, today),
    ]);
    return page(request, reply, (ctx) => usagePage(ctx, { limits, usage }));
  });

  const defaultInput: PlaygroundInput = {
    operation: 'extract',
    url: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ',
    format: 'json',
    language: '',
  };

  app.get('/playground', async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    const account = user.email_verified ? await accountOf(user) : null;
    return page(request, reply, (ctx) =>
      playgroundPage(ctx, {
        apiUrl,
        input: defaultInput,
        result: null,
        available: account?.key.status === 'active',
      }),
    );
  });

  app.post('/playground', async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    const body = request.body;
    const operation = field(body, 'operation') === 'validate' ? 'validate' : 'extract';
    const format = (FORMATS as readonly string[]).includes(field(body, 'format'))
      ? field(body, 'format')
      : 'json';
    const input: PlaygroundInput = {
      operation,
      url: field(body, 'url').trim().slice(0, 2048),
      format,
      language: field(body, 'language').trim().slice(0, 35),
    };
    const account = user.email_verified ? await accountOf(user) : null;
    if (!account || account.key.status !== 'active') {
      return page(
        request,
        reply,
        (ctx) =>
          playgroundPage(
            ctx,
            { apiUrl, input, result: null, available: false },
            { kind: 'error', text: 'Generate an API key first.' },
          ),
        409,
      );
    }
    const result =
      operation === 'validate'
        ? await gateway.call(account.account_id, {
            path: '/api/v1/validate',
            query: { url: input.url },
            client_ip: request.ip,
          })
        : await gateway.call(account.account_id, {
            path: '/api/v1/extract',
            body: {
              url: input.url,
              ...(format !== 'json' ? { format } : {}),
              ...(input.language ? { language: input.language } : {}),
            },
          });
    return page(request, reply, (ctx) => playgroundPage(ctx, { apiUrl, input, result, available: true }));
  });
}

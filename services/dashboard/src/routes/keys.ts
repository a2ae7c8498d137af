/**
 * The API key: generate (once, after the address is confirmed), regenerate and revoke (each behind
 * a ticked confirmation box). Each action answers 303 to GET /keys (POST-redirect-GET: reloading
 * the page repeats nothing); a new key crosses the redirect as a one-time flash of this session
 * (flash.ts: sealed, a minute at most, deleted when read), never in the URL or a log, so the page
 * after the redirect shows it once, with a first request that uses it. Named keys (made, listed and
 * revoked through the gateway's admin API, the person named as the audit log's actor) work the
 * same way; what the gateway refuses (400 with its reason) is said on the page, the form
 * filled in again.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { field, formSchema } from '../views/forms.ts';
import type { GatewayAccount } from '../gateway/client.ts';
import { API_KEY_SCOPES, GatewayError, type ApiKeyScope } from '../gateway/client.ts';
import { signedInUser } from '../auth/guards.ts';
import { keysPage } from '../views/keys-page.ts';
import type { NamedKeysView } from '../views/named-keys.ts';
import type { Notice } from '../views/pages.ts';
import type { Flash } from '../views/flash.ts';
import { namedKeyRequest, namedKeyRoutes } from './named-keys.ts';
import type { DashboardServices } from '../services.ts';
import { accountOf } from './account.ts';
import { scopesRoleMayGrant } from '@subx/contracts/workspaces';
import { currentWorkspaceOf } from '../workspaces/workspace-access.ts';

const confirmForm = formSchema('confirm');

/** The scopes the person's role may give a key, in the table's order (the form offers those only). */
async function grantableScopes(request: FastifyRequest): Promise<ApiKeyScope[]> {
  const workspace = await currentWorkspaceOf(request);
  if (!workspace) return [];
  const grantable = scopesRoleMayGrant(workspace.role);
  return API_KEY_SCOPES.filter((scope) => grantable.has(scope));
}

export default async function keyRoutes(app: FastifyInstance, s: DashboardServices) {
  const { guards } = s;
  const view = async (
    request: FastifyRequest,
    account: GatewayAccount | null,
    newKey: string | null = null,
    named: Omit<NamedKeysView, 'keys'> = { created: null },
  ) => ({
    account,
    // The tier panel is an explanation: a gateway without the limits route still shows the key.
    limits: account
      ? await request.gateway.limits(account.account_id).catch((err: unknown) => {
          request.log.warn({ err }, 'tier limits unavailable: the key page shows no tier panel');
          return null;
        })
      : null,
    newKey,
    apiUrl: s.apiUrl,
    videoUrl: s.sampleVideoUrl,
    named: account
      ? {
          ...named,
          grantable: await grantableScopes(request),
          // As the tier panel: a gateway without the keys listing still shows the primary key.
          keys: await request.gateway
            .listKeys(account.account_id)
            .then((keys) => keys.filter((key) => !key.primary))
            .catch((err: unknown) => {
              request.log.warn({ err }, 'named keys unavailable: the key page says so');
              return null;
            }),
        }
      : null,
  });
  const refuse = (reply: FastifyReply, account: GatewayAccount | null, text: string, status: number) =>
    reply.page((ctx) => keysPage(ctx, { ...noAccountView, account }, { kind: 'error', text }), status);
  const noAccountView = {
    account: null,
    limits: null,
    newKey: null,
    apiUrl: s.apiUrl,
    videoUrl: s.sampleVideoUrl,
    named: null,
  };
  const confirmFirst = guards.confirmed(async (_request, reply) =>
    refuse(reply, null, 'Confirm your email first.', 403),
  );
  /** The session the confirmed guard let through (key routes are for signed-in people only). */
  const sessionId = (request: FastifyRequest) => request.dash.session!.id;
  const done = async (request: FastifyRequest, reply: FastifyReply, flash: Flash) => {
    await s.flash.put(sessionId(request), flash);
    return reply.redirect('/keys', 303);
  };

  app.get(
    '/keys',
    {
      config: { permission: 'keys:read' },
      preHandler: guards.confirmed(async (_request, reply) =>
        reply.page((ctx) => keysPage(ctx, noAccountView)),
      ),
    },
    async (request, reply) => {
      // The account first: if the gateway fails here, the flash (and a new key in it) stays for a retry.
      const account = await accountOf(request);
      const flash = await s.flash.take(sessionId(request));
      const data = await view(request, account, flash?.apiKey ?? null, {
        created: flash?.createdKey ?? null,
      });
      const notice = flash ? { kind: flash.kind, text: flash.text } : null;
      return reply.page((ctx) => keysPage(ctx, data, notice));
    },
  );

  async function issueKey(request: FastifyRequest, reply: FastifyReply, mode: 'generate' | 'regenerate') {
    const current = await accountOf(request);
    if (!current) return refuse(reply, null, 'Confirm your email first.', 403);
    if (mode === 'regenerate' && field(request.body, 'confirm') !== 'yes') {
      return refuse(reply, current, 'Tick the box to confirm.', 400);
    }
    if (mode === 'generate' && current.key.status === 'active') {
      return refuse(reply, current, 'You already have a key: regenerate it instead.', 409);
    }
    const apiKey = await request.gateway.issueKey(current.account_id);
    const text =
      mode === 'generate'
        ? 'Your API key is ready.'
        : 'Your key was regenerated; the previous key no longer works.';
    return done(request, reply, { kind: 'ok', text, apiKey });
  }

  const keyForm = {
    config: { permission: 'primary-key:manage' as const },
    schema: { body: confirmForm },
    preHandler: confirmFirst,
  };
  app.post('/keys/generate', keyForm, (request, reply) => issueKey(request, reply, 'generate'));
  app.post('/keys/regenerate', keyForm, (request, reply) => issueKey(request, reply, 'regenerate'));

  /** The whole page again with what went wrong (and the form as it was sent). */
  const again = async (
    request: FastifyRequest,
    reply: FastifyReply,
    account: GatewayAccount,
    notice: Notice,
    status: number,
    form?: NamedKeysView['form'],
  ) => {
    const data = await view(request, account, null, { created: null, ...(form ? { form } : {}) });
    return reply.page((ctx) => keysPage(ctx, data, notice), status);
  };
  namedKeyRoutes(app, {
    preHandler: confirmFirst,
    async create(request, reply) {
      const account = await accountOf(request);
      if (!account) return refuse(reply, null, 'Confirm your email first.', 403);
      const parsed = namedKeyRequest(request.body);
      if ('problem' in parsed) {
        return again(request, reply, account, { kind: 'error', text: parsed.problem }, 400, parsed.form);
      }
      // A key does no more than its maker's role may (a developer's cannot read the webhook secret).
      const workspace = await currentWorkspaceOf(request);
      const grantable = new Set(await grantableScopes(request));
      const beyond = parsed.body.scopes.filter((scope) => !grantable.has(scope));
      if (beyond.length > 0) {
        const text = `Your role (${workspace?.role ?? 'none'}) cannot give a key ${beyond.join(', ')}.`;
        return again(request, reply, account, { kind: 'error', text }, 403, parsed.form);
      }
      try {
        const made = await request.gateway.createKey(
          account.account_id,
          parsed.body,
          signedInUser(request)._id,
        );
        const text = `The key “${made.name}” is ready.`;
        return await done(request, reply, {
          kind: 'ok',
          text,
          createdKey: { name: made.name, apiKey: made.api_key },
        });
      } catch (error) {
        if (!(error instanceof GatewayError && error.status === 400)) throw error;
        const text = `The key was not made: ${error.detail ?? error.code}`;
        return again(request, reply, account, { kind: 'error', text }, error.status, parsed.form);
      }
    },
    async revoke(request, reply, keyId) {
      const account = await accountOf(request);
      if (!account) return reply.redirect('/keys', 303);
      if (field(request.body, 'confirm') !== 'yes') {
        return again(request, reply, account, { kind: 'error', text: 'Tick the box to confirm.' }, 400);
      }
      try {
        const revoked = await request.gateway.revokeNamedKey(
          account.account_id,
          keyId,
          signedInUser(request)._id,
        );
        const text = `The key “${revoked.name}” is revoked: requests with it are refused.`;
        return await done(request, reply, { kind: 'ok', text });
      } catch (error) {
        if (!(error instanceof GatewayError && (error.status === 404 || error.status === 400))) throw error;
        const text =
          error.status === 404
            ? `This account has no key ${keyId}.`
            : `The key was not revoked: ${error.detail ?? error.code}`;
        return again(request, reply, account, { kind: 'error', text }, error.status);
      }
    },
  });

  app.post(
    '/keys/revoke',
    {
      config: { permission: 'primary-key:manage' },
      schema: { body: confirmForm },
      preHandler: guards.confirmed(async (_request, reply) => reply.redirect('/keys', 303)),
    },
    async (request, reply) => {
      const current = await accountOf(request);
      if (!current) return reply.redirect('/keys', 303);
      if (field(request.body, 'confirm') !== 'yes') {
        return refuse(reply, current, 'Tick the box to confirm.', 400);
      }
      await request.gateway.revokeKey(current.account_id);
      return done(request, reply, { kind: 'ok', text: 'Your key is revoked.' });
    },
  );
}

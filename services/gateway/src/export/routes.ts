/**
 * GET /api/v1/account/export: the account's data as JSON lines (account-export.ts), for its owner
 * only. The operation needs `keys:admin` like the other account-wide reads, and on top of it the
 * account's primary key: a named key, even with every scope, is 403, since whoever holds a leaked
 * named key should not be able to take everything out in one call.
 */
import { AppError } from '@subx/errors';
import type { KeyHolder } from '../access/key-limits.ts';
import { routeOptions, routePath } from '../http/route-context.ts';
import type { RouteRegistrar } from '../http/route-context.ts';
import { EXPORT_FORMAT, sendAccountExport } from './account-export.ts';
import type { ExportSources } from './account-export.ts';
import { exportOperation } from './operations.ts';

function primaryKeyRequired(): AppError {
  return new AppError(
    'INSUFFICIENT_SCOPE',
    "The account's export needs the account's primary key; a named key may not export it, whatever its scopes.",
    { details: { required_scope: 'keys:admin', primary_key_required: true } },
  );
}

export const registerExport: RouteRegistrar = (app, ctx) => {
  const spec = exportOperation('exportAccount');
  app.get(routePath(spec), routeOptions(ctx, spec), async (request, reply) => {
    const holder = request.account as KeyHolder | null;
    if (!holder) throw new Error('account route without an authenticated account');
    if (holder.limits) throw primaryKeyRequired();
    const { deps } = ctx;
    if (!deps.accountProfile) {
      throw new AppError('SERVICE_UNAVAILABLE', "The account's export is not enabled on this gateway.");
    }
    const profile = await deps.accountProfile(holder.id);
    if (!profile) throw new AppError('UNAUTHORIZED', 'The account of this key no longer exists.');
    await deps.audit?.record({
      accountId: holder.id,
      action: 'account.exported',
      actor: { type: 'key', id: holder.keyId ?? null },
      target: { type: 'account', id: holder.id },
      sourceIp: request.ip,
      details: { format: EXPORT_FORMAT },
    });
    const sources: ExportSources = {
      ...(deps.members ? { members: deps.members } : {}),
      ...(deps.apiKeys ? { apiKeys: deps.apiKeys } : {}),
      ...(deps.webhookSecrets ? { webhookSecrets: deps.webhookSecrets } : {}),
      ...(deps.watches ? { watches: deps.watches } : {}),
      ...(deps.jobs ? { jobs: deps.jobs } : {}),
      ...(deps.usage ? { usage: deps.usage } : {}),
      ...(deps.audit ? { audit: deps.audit } : {}),
    };
    return sendAccountExport(request, reply, { sources, profile, nowMs: deps.clock.now() });
  });
};

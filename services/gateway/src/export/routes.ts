/**
 * GET /api/v1/account/export: the account's data as JSON lines (account-export.ts), for its owner
 * only. The operation needs `keys:admin` like the other account-wide reads, and on top of it the
 * account's primary key: a named key, even with every scope, is 403, since whoever holds a leaked
 * named key should not be able to take everything out in one call.
 */
import { Readable } from 'node:stream';
import { AppError } from '@subx/errors';
import type { KeyHolder } from '../access/key-limits.ts';
import { routeOptions, routePath } from '../http/route-context.ts';
import type { RouteRegistrar } from '../http/route-context.ts';
import { accountExportLines, EXPORT_FORMAT } from './account-export.ts';
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
    const nowMs = deps.clock.now();
    const lines = accountExportLines(sources, profile, nowMs);
    async function* logged(): AsyncGenerator<string> {
      try {
        yield* lines;
      } catch (err) {
        // The headers are out: the connection is cut without the `end` line, so the reader knows
        // the archive is incomplete; the cause is ours to read.
        request.log.error({ err, account_id: holder!.id }, 'account export failed mid-stream');
        throw err;
      }
    }
    const date = new Date(nowMs).toISOString().slice(0, 10);
    return (
      reply
        .type('application/x-ndjson; charset=utf-8')
        .header('content-disposition', `attachment; filename="subx-export-${holder.id}-${date}.jsonl"`)
        // Everything the account holds: no cache between us and the caller keeps it.
        .header('cache-control', 'no-store')
        .send(Readable.from(logged()))
    );
  });
};

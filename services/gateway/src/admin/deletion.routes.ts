/**
 * DELETE /admin/v1/accounts/{id}: the workspace and everything it owns (src/deletion/), for the
 * dashboard's "Delete workspace" once its owner confirmed from their mailbox. GET …/export: the
 * archive of the public GET /api/v1/account/export (src/export/account-export.ts, the one
 * implementation), for the dashboard's "Download export". `member_id` names the dashboard user.
 */
import type { FastifyInstance } from 'fastify';
import type { ActingMemberQuery } from '@subx/contracts/access';
import type { AccountDeleted } from '@subx/contracts/admin-api';
import type { AccountProfile } from '../access/types.ts';
import type { AuditLog } from '../domain/audit-log.ts';
import type { ExportSources } from '../export/account-export.ts';
import { EXPORT_FORMAT, sendAccountExport } from '../export/account-export.ts';
import type { WorkspaceDeletion } from '../deletion/delete-workspace.ts';
import { AppError, isAppError } from '@subx/errors';
import type { Clock } from '@subx/ports';
import { adminRoute } from './operations.ts';

type Route = { Params: { id: string }; Querystring: ActingMemberQuery };

export interface AdminDeletionRoutesOptions {
  /** Absent: DELETE answers 503. */
  deletion?: WorkspaceDeletion;
  accountProfile: (accountId: string) => Promise<AccountProfile | null>;
  /** Where the export reads; a part that is absent is left out of the archive. */
  exportSources: ExportSources;
  audit?: AuditLog;
  clock: Clock;
}

const notFound = () => new AppError('NOT_FOUND', 'No account exists with this id.');

export function adminDeletionRoutes(fastify: FastifyInstance, options: AdminDeletionRoutesOptions): void {
  const remove = adminRoute('deleteAccount');
  fastify.delete<Route>(remove.url, { schema: remove.schema }, async (request): Promise<AccountDeleted> => {
    const { deletion } = options;
    if (!deletion) {
      throw new AppError('SERVICE_UNAVAILABLE', 'Workspace deletion is not enabled on this gateway.');
    }
    const deleted = await deletion.delete(request.params.id).catch((err: unknown) => {
      // The workspace is marked and its keys are dead; what failed is finished by calling again.
      if (isAppError(err) && err.retryable) throw err;
      request.log.error({ err, account_id: request.params.id }, 'workspace deletion stopped half-way');
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        'The workspace is refused from now on, but not every store could be cleared yet; call again to finish.',
        { cause: err, retryAfterSeconds: 5 },
      );
    });
    if (!deleted) throw notFound();
    request.log.info(
      { account_id: deleted.account_id, member_id: request.query.member_id ?? null },
      'workspace deletion asked',
    );
    return deleted;
  });

  const exported = adminRoute('exportAccountData');
  fastify.get<Route>(exported.url, { schema: exported.schema }, async (request, reply) => {
    const profile = await options.accountProfile(request.params.id);
    if (!profile) throw notFound();
    const member = request.query.member_id;
    await options.audit?.record({
      accountId: profile.id,
      action: 'account.exported',
      actor: member === undefined ? { type: 'operator', id: null } : { type: 'member', id: member },
      target: { type: 'account', id: profile.id },
      sourceIp: request.ip,
      details: { format: EXPORT_FORMAT },
    });
    return sendAccountExport(request, reply, {
      sources: options.exportSources,
      profile,
      nowMs: options.clock.now(),
    });
  });
}

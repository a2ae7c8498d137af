/**
 * GET /admin/v1/accounts/{id}/audit: the account's audit log for the operator and the dashboard,
 * the page the public GET /api/v1/audit answers (without the request id). POST …/audit: the
 * dashboard reports what only it sees (sign-ins, failed sign-ins, password resets), recorded with
 * actor `member`.
 */
import { isIP } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { AuditPage, RecordAuditBody } from '@subx/contracts/audit';
import { AppError, Errors } from '@subx/errors';
import type { AccountRepository } from '../access/accounts.ts';
import type { AuditLog, AuditReader } from '../domain/audit-log.ts';
import { adminRoute } from './operations.ts';

type AccountParams = { Params: { id: string } };

export function adminAuditRoutes(
  fastify: FastifyInstance,
  options: { accounts: AccountRepository; audit?: AuditLog & AuditReader },
): void {
  const auditOf = () => {
    if (!options.audit) {
      throw new AppError('SERVICE_UNAVAILABLE', 'The audit log is not enabled on this gateway.');
    }
    return options.audit;
  };
  const known = async (id: string) => {
    const doc = await options.accounts.get(id);
    if (!doc) throw new AppError('NOT_FOUND', 'No account exists with this id.');
    return doc._id;
  };

  const list = adminRoute('listAccountAuditEvents');
  fastify.get<AccountParams & { Querystring: { limit?: number; cursor?: string } }>(
    list.url,
    { schema: list.schema },
    async (request): Promise<AuditPage> => {
      const audit = auditOf();
      const accountId = await known(request.params.id);
      return audit.list(accountId, {
        ...(request.query.limit === undefined ? {} : { limit: request.query.limit }),
        cursor: request.query.cursor ?? null,
      });
    },
  );

  const report = adminRoute('recordAccountAuditEvent');
  fastify.post<AccountParams & { Body: RecordAuditBody }>(
    report.url,
    { schema: report.schema },
    async (request, reply) => {
      const audit = auditOf();
      const { action, member_id: memberId, source_ip: sourceIp, invitation } = request.body;
      if (sourceIp && isIP(sourceIp) === 0) {
        throw Errors.invalidRequest('source_ip must be an IPv4 or IPv6 address.');
      }
      const accountId = await known(request.params.id);
      await audit.record({
        accountId,
        action,
        actor: { type: 'member', id: memberId ?? null },
        sourceIp: sourceIp ?? null,
        ...(invitation
          ? {
              target: { type: 'invitation', id: invitation.id },
              details: { email: invitation.email, role: invitation.role },
            }
          : {}),
      });
      return reply.code(204).send();
    },
  );
}

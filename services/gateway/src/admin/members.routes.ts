/**
 * The admin API's member routes, for the dashboard (which alone knows the people):
 * - GET /admin/v1/accounts/{id}/members: the workspace's members and their roles;
 * - PUT …/members/{user_id}: adds a member (an accepted invitation) or changes a role;
 * - DELETE …/members/{user_id}: removes one, revoking the keys they made unless `reassign_to`;
 * - GET /admin/v1/members/{user_id}/workspaces: where a person belongs, with which role.
 * `member_id` in the query names the dashboard user acting (the audit log's actor).
 */
import type { FastifyInstance } from 'fastify';
import type {
  MemberParams,
  PutWorkspaceMemberBody,
  RemoveWorkspaceMemberQuery,
  WorkspaceMemberParams,
} from '@subx/contracts/workspaces';
import type { ActingMemberQuery } from '@subx/contracts/access';
import { AppError } from '@subx/errors';
import type { KeyManager } from '../access/api-keys.ts';
import { adminRoute } from './operations.ts';
import type { WorkspaceMembers } from '../access/workspace-members.ts';

const workspaceNotFound = () => new AppError('NOT_FOUND', 'No workspace exists with this id.');

function managerOf(request: { query: ActingMemberQuery; ip: string }): KeyManager {
  const member = request.query.member_id;
  return {
    actor: member === undefined ? { type: 'operator', id: null } : { type: 'member', id: member },
    sourceIp: request.ip,
  };
}

export function adminMemberRoutes(fastify: FastifyInstance, options: { members: WorkspaceMembers }): void {
  const { members } = options;

  const list = adminRoute('listWorkspaceMembers');
  fastify.get<{ Params: { id: string } }>(list.url, { schema: list.schema }, async (request) => {
    const found = await members.list(request.params.id);
    if (!found) throw workspaceNotFound();
    return { members: found };
  });

  const put = adminRoute('putWorkspaceMember');
  fastify.put<{
    Params: WorkspaceMemberParams;
    Querystring: ActingMemberQuery;
    Body: PutWorkspaceMemberBody;
  }>(put.url, { schema: put.schema }, async (request) => {
    const { id, user_id: userId } = request.params;
    const done = await members.put(id, userId, request.body, managerOf(request));
    if (!done) throw workspaceNotFound();
    return done.member;
  });

  const remove = adminRoute('removeWorkspaceMember');
  fastify.delete<{ Params: WorkspaceMemberParams; Querystring: RemoveWorkspaceMemberQuery }>(
    remove.url,
    { schema: remove.schema },
    async (request) => {
      const { id, user_id: userId } = request.params;
      const removed = await members.remove(
        id,
        userId,
        { reassignTo: request.query.reassign_to },
        managerOf(request),
      );
      if (!removed) throw new AppError('NOT_FOUND', 'This person is not a member of the workspace.');
      return removed;
    },
  );

  const of = adminRoute('listMemberWorkspaces');
  fastify.get<{ Params: MemberParams }>(of.url, { schema: of.schema }, async (request) => ({
    workspaces: await members.workspacesOf(request.params.user_id),
  }));
}

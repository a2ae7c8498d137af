/**
 * The fake gateway's workspace members (support.ts builds the fake with them): the rules the
 * gateway's admin API enforces (services/gateway/src/access/workspace-members.ts), so a route test
 * through the fake tells what the real one answers — a change that leaves no owner is 400
 * INVALID_REQUEST with the gateway's message, an unknown workspace or member 404, and removing a
 * member revokes the keys they made unless another member takes them. Every change is an event of
 * the workspace's audit log.
 */
import { MAX_WORKSPACE_MEMBERS, WORKSPACE_ROLES } from '@subx/contracts/workspaces';
import type { GatewayAccount, GatewayClient, WorkspaceMember } from '../src/gateway/client.ts';
import { GatewayError } from '../src/gateway/client.ts';
import type { fakeNamedKeys } from './named-keys-support.ts';

type MemberMethods = Pick<GatewayClient, 'members' | 'putMember' | 'removeMember' | 'workspacesOf'>;

const lastOwner = () =>
  new GatewayError(
    400,
    'INVALID_REQUEST',
    'A workspace keeps at least one owner: make another member an owner first.',
  );

export function fakeMembers(
  accountOf: (id: string) => GatewayAccount,
  keys: ReturnType<typeof fakeNamedKeys>,
) {
  /** Per workspace, in joining order. */
  const memberships = new Map<string, WorkspaceMember[]>();
  const of = (id: string) => {
    accountOf(id);
    const list = memberships.get(id) ?? [];
    memberships.set(id, list);
    return list;
  };
  const owners = (list: WorkspaceMember[]) => list.filter((m) => m.role === 'owner').length;
  const order = (role: WorkspaceMember['role']) => WORKSPACE_ROLES.indexOf(role);
  const audit = (id: string, action: string, by: string, target: string, details: Record<string, unknown>) =>
    keys.record(id, {
      action,
      actor: { type: 'member', id: by },
      target: { type: 'member', id: target },
      source_ip: '127.0.0.1',
      details: details as never,
    });

  const methods: MemberMethods = {
    async members(id) {
      return structuredClone([...of(id)].sort((a, b) => order(a.role) - order(b.role)));
    },
    async putMember(id, userId, body, by) {
      const list = of(id);
      const found = list.find((m) => m.member_id === userId);
      if (!found) {
        if (list.length >= MAX_WORKSPACE_MEMBERS) throw new GatewayError(400, 'INVALID_REQUEST', 'too many');
        const member = {
          member_id: userId,
          email: body.email,
          role: body.role,
          joined_at: new Date().toISOString(),
        };
        list.push(member);
        audit(id, 'member.added', by, userId, { role: body.role });
        return structuredClone(member);
      }
      if (found.role === 'owner' && body.role !== 'owner' && owners(list) <= 1) throw lastOwner();
      const from = found.role;
      Object.assign(found, { role: body.role, email: body.email });
      if (from !== body.role) audit(id, 'member.role_changed', by, userId, { from, to: body.role });
      return structuredClone(found);
    },
    async removeMember(id, userId, by, reassignTo) {
      const list = of(id);
      const member = list.find((m) => m.member_id === userId);
      if (!member) throw new GatewayError(404, 'NOT_FOUND', 'This person is not a member of the workspace.');
      if (
        reassignTo !== undefined &&
        !list.some((m) => m.member_id === reassignTo && m.member_id !== userId)
      ) {
        throw new GatewayError(400, 'INVALID_REQUEST', 'reassign_to: not a member of this workspace.');
      }
      if (member.role === 'owner' && owners(list) <= 1) throw lastOwner();
      list.splice(list.indexOf(member), 1);
      const revoked: string[] = [];
      const reassigned: string[] = [];
      for (const key of keys.named.get(id) ?? []) {
        if (key.status !== 'active' || keys.makers.get(key.id) !== userId) continue;
        if (reassignTo !== undefined) {
          keys.makers.set(key.id, reassignTo);
          reassigned.push(key.id);
        } else {
          key.status = 'revoked';
          revoked.push(key.id);
        }
      }
      audit(id, 'member.removed', by, userId, { role: member.role, revoked_keys: revoked });
      return { member: structuredClone(member), revoked_keys: revoked, reassigned_keys: reassigned };
    },
    async workspacesOf(userId) {
      const found = [];
      for (const [id, list] of memberships) {
        const m = list.find((x) => x.member_id === userId);
        if (m) found.push({ account_id: id, role: m.role, joined_at: m.joined_at });
      }
      return found.sort((a, b) => a.joined_at.localeCompare(b.joined_at));
    },
  };
  return { methods, memberships };
}

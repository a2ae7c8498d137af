/**
 * The workspace's people: the members page (members and their roles, invitations waiting, the
 * person's own workspaces to switch between), the page of an invitation's link, and the page of a
 * signed-in person who belongs to no workspace (any more).
 */
import { WORKSPACE_ROLE_DESCRIPTIONS, WORKSPACE_ROLES, type WorkspaceRole } from '@subx/contracts/workspaces';
import type { Html } from './html.ts';
import { html } from './html.ts';
import { timeTag } from './dates.ts';
import { dataTable } from './table.ts';
import type { WorkspaceMember } from '../gateway/client.ts';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../auth/passwords.ts';
import type { Notice, PageContext } from './pages.ts';
import { csrfField, layout } from './pages.ts';

/** What the page shows of an invitation waiting (workspaces/invitations.ts stores more). */
interface InvitationView {
  _id: string;
  email: string;
  role: WorkspaceRole;
  expires_at: string;
}

interface MembersView {
  me: string;
  myRole: WorkspaceRole;
  members: readonly WorkspaceMember[];
  /** Null when the person may not manage members (they see no invitations). */
  invitations: readonly InvitationView[] | null;
  /** The roles this person may give: an admin gives every role but owner. */
  grantable: readonly WorkspaceRole[];
  /** Every workspace the person belongs to; `current` is the one the pages act on. */
  workspaces: readonly { account_id: string; role: WorkspaceRole; current: boolean }[];
}

function roleOptions(roles: readonly WorkspaceRole[], selected: WorkspaceRole | null): Html {
  return html`${roles.map(
    (role) => html`<option value="${role}" ${role === selected ? html` selected` : ''}>${role}</option>`,
  )}`;
}

function memberRow(member: WorkspaceMember, view: MembersView, ctx: PageContext): Html {
  const self = member.member_id === view.me;
  // Owners are changed by owners only; the page offers what the gateway and the route allow.
  const mayChange = view.invitations !== null && (member.role !== 'owner' || view.myRole === 'owner');
  const others = view.members.filter((m) => m.member_id !== member.member_id);
  const actions = mayChange
    ? html`<form method="post" action="/members/${member.member_id}/role" class="inline">
          ${csrfField(ctx)}<label
            >Role
            <select name="role">
              ${roleOptions(view.grantable, member.role)}
            </select></label
          >
          <button type="submit">Change</button>
        </form>
        ${
          self
            ? ''
            : html`<form method="post" action="/members/${member.member_id}/remove" class="inline">
                ${csrfField(ctx)}<label
                  >Keys they made go to
                  <select name="reassign_to">
                    <option value="">nobody: revoke them</option>
                    ${others.map((m) => html`<option value="${m.member_id}">${m.email}</option>`)}
                  </select></label
                >
                <label><input type="checkbox" name="confirm" value="yes" /> I am sure</label>
                <button type="submit" class="danger">Remove</button>
              </form>`
        }`
    : '—';
  return html`<tr data-member="${member.email}">
    <th scope="row">${member.email}${self ? html` <span class="hint">(you)</span>` : ''}</th>
    <td data-role>${member.role}</td>
    <td>${timeTag(member.joined_at)}</td>
    <td>${actions}</td>
  </tr>`;
}

function invitationsBlock(ctx: PageContext, view: MembersView): Html {
  if (view.invitations === null) return html``;
  const rows = view.invitations.map(
    (inv) =>
      html`<tr data-invitation="${inv.email}">
        <th scope="row">${inv.email}</th>
        <td>${inv.role}</td>
        <td>${timeTag(inv.expires_at)}</td>
        <td>
          <form method="post" action="/members/invitations/${inv._id}/withdraw" class="inline">
            ${csrfField(ctx)}<button type="submit">Withdraw</button>
          </form>
        </td>
      </tr>`,
  );
  return html`<h2>Invite someone</h2>
    <form method="post" action="/members/invite" id="invite-form">
      ${csrfField(ctx)}
      <label>E-mail <input type="email" name="email" required maxlength="254" autocomplete="off" /></label>
      <label
        >Role
        <select name="role">
          ${roleOptions(view.grantable, 'developer')}
        </select></label
      >
      <button type="submit">Send invitation</button>
    </form>
    <p class="hint">The link in the mail works once, for 7 days.</p>
    ${
      rows.length
        ? dataTable({
            id: 'invitations',
            label: 'Invitations',
            caption: 'Invitations waiting',
            columns: ['E-mail', 'Role', 'Expires', ''],
            rows,
          })
        : html`<p id="no-invitations">No invitation is waiting.</p>`
    }`;
}

function workspacesBlock(ctx: PageContext, view: MembersView): Html {
  const leave = html`<form method="post" action="/members/leave" class="inline" id="leave-form">
    ${csrfField(ctx)}<label><input type="checkbox" name="confirm" value="yes" /> I am sure</label>
    <button type="submit" class="danger">Leave this workspace</button>
  </form>`;
  const rows = view.workspaces.map(
    (w) =>
      html`<tr data-workspace="${w.account_id}">
        <th scope="row">
          <code>${w.account_id}</code>${w.current ? html` <span class="hint">(this one)</span>` : ''}
        </th>
        <td>${w.role}</td>
        <td>
          ${
            w.current
              ? leave
              : html`<form method="post" action="/workspaces/switch" class="inline">
                  ${csrfField(ctx)}<input type="hidden" name="account_id" value="${w.account_id}" />
                  <button type="submit">Switch to it</button>
                </form>`
          }
        </td>
      </tr>`,
  );
  return html`<h2>Your workspaces</h2>
    ${dataTable({ id: 'workspaces', label: 'Your workspaces', caption: 'Workspaces you belong to', columns: ['Workspace', 'Your role', ''], rows })}`;
}

export function membersPage(ctx: PageContext, view: MembersView, notice?: Notice | null): string {
  const roles = html`<dl class="roles">
    ${WORKSPACE_ROLES.map(
      (role) =>
        html`<dt>${role}</dt>
          <dd>${WORKSPACE_ROLE_DESCRIPTIONS[role]}</dd>`,
    )}
  </dl>`;
  const body = html`<p>
      The people of this workspace: they share its balance, keys, jobs, watches and webhooks, each as far as
      their role goes. Your role: <strong id="my-role">${view.myRole}</strong>.
    </p>
    ${dataTable({
      id: 'members',
      label: 'Members',
      caption: 'Members, owners first',
      columns: ['E-mail', 'Role', 'Joined', ''],
      rows: view.members.map((member) => memberRow(member, view, ctx)),
    })}
    ${invitationsBlock(ctx, view)} ${workspacesBlock(ctx, view)}
    <h2>Roles</h2>
    ${roles}`;
  return layout(ctx, 'Members', body, notice);
}

export function noWorkspacePage(ctx: PageContext, notice?: Notice | null): string {
  return layout(
    ctx,
    'No workspace',
    html`<p id="no-workspace">
        You are not a member of a workspace (any more). Open an invitation's link to join one, or start your
        own.
      </p>
      <form method="post" action="/workspaces/new">
        ${csrfField(ctx)}<button type="submit">Start a workspace of my own</button>
      </form>`,
    notice ?? null,
  );
}

export type InvitationState =
  /** Signed in with the invited address: one button. */
  | 'accept'
  /** Nobody has this address yet: choose a password, and the link proves the mailbox. */
  | 'new-person'
  /** The address has an account: sign in with it first. */
  | 'sign-in'
  /** Signed in as someone else. */
  | 'someone-else';

export function invitationPage(
  ctx: PageContext,
  invitation: Pick<InvitationView, 'email' | 'role'>,
  token: string,
  state: InvitationState,
  notice?: Notice | null,
): string {
  const what = html`<p>
    <strong>${invitation.email}</strong> is invited to a subx workspace as
    <strong>${invitation.role}</strong>: ${WORKSPACE_ROLE_DESCRIPTIONS[invitation.role]}
  </p>`;
  const hidden = html`${csrfField(ctx)}<input type="hidden" name="token" value="${token}" />`;
  let action: Html;
  switch (state) {
    case 'accept':
      action = html`<form method="post" action="/invitation" id="accept-invitation">
        ${hidden}<button type="submit">Join the workspace</button>
      </form>`;
      break;
    case 'new-person':
      action = html`<form method="post" action="/invitation" id="accept-invitation">
        ${hidden}
        <label
          >Choose a password
          <input
            type="password"
            name="new_password"
            required
            minlength="${MIN_PASSWORD_LENGTH}"
            maxlength="${MAX_PASSWORD_LENGTH}"
            autocomplete="new-password"
        /></label>
        <button type="submit">Join the workspace</button>
      </form>`;
      break;
    case 'sign-in':
      action = html`<p id="sign-in-first">
        This address has a subx account: <a href="/sign-in">sign in</a> with it, then open the link from the
        mail again.
      </p>`;
      break;
    case 'someone-else':
      action = html`<p id="someone-else">
        You are signed in with another address. Sign out, then open the link from the mail again.
      </p>`;
      break;
  }
  return layout(ctx, 'Join a workspace', html`${what}${action}`, notice ?? null);
}

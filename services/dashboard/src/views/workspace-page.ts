/**
 * The workspace on the account page: "Download export" (everything it holds, as JSON lines) and
 * "Delete workspace" (behind a ticked box; the deletion itself is confirmed from the person's
 * mailbox), the link's confirmation page, and what the deletion removed.
 */
import type { AccountDeleted } from '../gateway/client.ts';
import type { Html } from './html.ts';
import { html } from './html.ts';
import type { Notice, PageContext } from './pages.ts';
import { confirmedForm, csrfField, layout, noWorkspace } from './pages.ts';

export function workspaceSection(ctx: PageContext): Html {
  return html`<section class="card danger-zone" aria-labelledby="workspace-title">
    <h2 id="workspace-title">Your workspace</h2>
    <p>
      Everything the workspace holds (its keys without their secrets, jobs and their results, watches, usage
      and audit log) as one file of JSON lines:
      <a href="/workspace/export" id="download-export" download>Download export</a>.
    </p>
    <p>
      Deleting the workspace revokes every API key at once and removes its jobs, results, watches, webhook
      secrets and audit log for good. We send a link to your email address to confirm it.
    </p>
    ${confirmedForm(ctx, {
      action: '/workspace/delete',
      id: 'confirm-delete-workspace',
      dialog: 'Delete the workspace? Every key stops working and its data is removed for good.',
      label: 'I understand the workspace and everything it holds are deleted for good',
      button: html`<button type="submit" class="danger">Delete workspace</button>`,
    })}
  </section>`;
}

/** The mailed link's page: nothing happens until the person confirms with the button. */
export function confirmDeletionPage(ctx: PageContext, token: string, notice?: Notice | null): string {
  return layout(
    ctx,
    'Delete the workspace',
    html`<form method="post" action="/delete-workspace" class="card danger-zone">
      ${csrfField(ctx)}<input type="hidden" name="token" value="${token}" />
      <p>
        This deletes the workspace now: every API key stops working at once, and its jobs, results, watches,
        webhook secrets and audit log are removed. It cannot be undone.
      </p>
      <button type="submit" class="danger">Delete the workspace now</button>
    </form>`,
    notice,
  );
}

export function workspaceDeletedPage(ctx: PageContext, deleted: AccountDeleted | null): string {
  const removed = deleted?.removed;
  return layout(
    ctx,
    'Workspace deleted',
    html`${
      removed
        ? html`<p class="card" id="deletion-summary">
            Removed: ${String(removed.api_keys)} API keys, ${String(removed.jobs)} jobs with
            ${String(removed.job_results)} results, ${String(removed.watches)} watches,
            ${String(removed.audit_events)} audit events. Billing keeps its record of what was charged, under
            a pseudonym that no longer leads to you.
          </p>`
        : ''
    }${noWorkspace()}`,
    { kind: 'ok', text: 'The workspace is deleted: its keys no longer work.' },
  );
}

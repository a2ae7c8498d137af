/**
 * The keys page's "Named keys" section: the account's keys besides the primary one, each with its
 * own scopes, optional expiry and allowed networks, in a table with a Revoke form per key; a key
 * just made, shown once; and the form that makes one (a checkbox per scope with what it allows,
 * taken from the contract).
 */
import type { Html } from './html.ts';
import { html } from './html.ts';
import { timeTag } from './dates.ts';
import { dataTable } from './table.ts';
import type { ApiKeyInfo, ApiKeyScope } from '../gateway/client.ts';
import { API_KEY_SCOPE_DESCRIPTIONS, API_KEY_SCOPES } from '../gateway/client.ts';
import type { PageContext } from './pages.ts';
import { confirmedForm, csrfField } from './pages.ts';

/** What the make-a-key form held, to fill it in again when the gateway refused it. */
export interface NamedKeyForm {
  name: string;
  scopes: readonly ApiKeyScope[];
  /** The date input's value, `YYYY-MM-DD`, or ''. */
  expiresOn: string;
  /** One CIDR per line, as typed. */
  networks: string;
}

export interface NamedKeysView {
  /** The account's named keys, oldest first; null when the gateway could not list them. */
  keys: readonly ApiKeyInfo[] | null;
  /** A key made by the request just before (POST-redirect-GET flash), shown once. */
  created: { name: string; apiKey: string } | null;
  /** The form as sent, after a refusal; absent: an empty form. */
  form?: NamedKeyForm;
  /**
   * The scopes the person's role may give a key (workspace roles); absent: every scope. Empty: the
   * role makes and revokes no keys, and the page shows the list only.
   */
  grantable?: readonly ApiKeyScope[];
}

/** The form field of each scope's checkbox. */
export const scopeField = (scope: ApiKeyScope) => `scope:${scope}`;

function createdPanel(created: NonNullable<NamedKeysView['created']>): Html {
  return html`<section class="card reveal" aria-labelledby="new-named-key-title">
    <h3 id="new-named-key-title">Your new key “${created.name}”</h3>
    <p>Copy it now: it is shown <strong>once</strong> and cannot be shown again.</p>
    <p class="key-row">
      <code id="new-named-key" class="key">${created.apiKey}</code>
      <button type="button" class="copy" data-copy="new-named-key">Copy</button>
    </p>
    <p class="copied" role="status" aria-live="polite"></p>
  </section>`;
}

function keyRow(ctx: PageContext, key: ApiKeyInfo): Html {
  const networks = key.allowed_cidrs?.length
    ? html`${key.allowed_cidrs.map((cidr, i) => html`${i ? html`<br />` : ''}<code>${cidr}</code>`)}`
    : html`anywhere`;
  const revoke =
    key.status === 'revoked'
      ? html`—`
      : confirmedForm(ctx, {
          action: `/keys/named/${encodeURIComponent(key.id)}/revoke`,
          id: `confirm-revoke-${key.id}`,
          dialog: `Revoke the key “${key.name}”? Requests with it will be refused.`,
          label: `Refuse requests with “${key.name}” from now on`,
          button: html`<button type="submit" class="danger">Revoke</button>`,
        });
  return html`<tr data-key-id="${key.id}">
    <th scope="row">${key.name}<br /><code class="hint">${key.prefix}…${key.last4}</code></th>
    <td>${key.scopes.map((scope, i) => html`${i ? html`<br />` : ''}<code>${scope}</code>`)}</td>
    <td class="status-${key.status}">${key.status}</td>
    <td>${timeTag(key.created_at)}</td>
    <td>${key.expires_at ? timeTag(key.expires_at) : 'never'}</td>
    <td>${networks}</td>
    <td>${key.last_used_at ? timeTag(key.last_used_at) : 'never'}</td>
    <td>${revoke}</td>
  </tr>`;
}

function keysTable(ctx: PageContext, keys: readonly ApiKeyInfo[] | null): Html {
  if (keys === null) {
    return html`<p id="named-keys-unavailable">
      The named keys cannot be listed right now. Try again later.
    </p>`;
  }
  if (keys.length === 0) return html`<p id="no-named-keys">No named keys yet.</p>`;
  return dataTable({
    id: 'named-keys',
    label: 'Named keys',
    caption: 'Named keys, oldest first',
    columns: ['Name', 'Scopes', 'Status', 'Created', 'Expires', 'Allowed networks', 'Last used', 'Revoke'],
    rows: keys.map((key) => keyRow(ctx, key)),
  });
}

function createForm(ctx: PageContext, form: NamedKeyForm | undefined, scopes: readonly ApiKeyScope[]): Html {
  if (scopes.length === 0) return html``;
  const checked = new Set(form?.scopes ?? []);
  return html`<form method="post" action="/keys/named" class="card named-key-form" id="new-named-key-form">
    <h3>Make a named key</h3>
    ${csrfField(ctx)}
    <label for="key-name">Name <span class="hint">(what the key is for, e.g. “CI pipeline”)</span></label>
    <input id="key-name" name="name" required maxlength="100" value="${form?.name ?? ''}" />
    <fieldset>
      <legend>Scopes <span class="hint">(at least one)</span></legend>
      ${scopes.map(
        (scope) =>
          html`<p>
            <input
              type="checkbox"
              id="scope-${scope}"
              name="${scopeField(scope)}"
              value="yes"
              ${checked.has(scope) ? html`checked` : ''}
            />
            <label for="scope-${scope}"
              ><code>${scope}</code>: <span class="hint">${API_KEY_SCOPE_DESCRIPTIONS[scope]}</span></label
            >
          </p>`,
      )}
    </fieldset>
    <label for="key-expires">Expires on <span class="hint">(optional)</span></label>
    <input
      id="key-expires"
      name="expires_on"
      type="date"
      value="${form?.expiresOn ?? ''}"
      aria-describedby="key-expires-hint"
    />
    <p class="hint" id="key-expires-hint">
      The key works until the end of that day in UTC: it stops at 00:00 UTC the day after. Empty: it does not
      expire.
    </p>
    <label for="key-networks">Allowed networks <span class="hint">(optional, one CIDR per line)</span></label>
    <textarea id="key-networks" name="allowed_networks" rows="3" aria-describedby="key-networks-hint">
${form?.networks ?? ''}</textarea>
    <p class="hint" id="key-networks-hint">
      e.g. <code>203.0.113.0/24</code> or <code>2001:db8::/32</code>; calls from anywhere else are refused
      with <code>403 SOURCE_NOT_ALLOWED</code>. Empty: from anywhere.
    </p>
    <button type="submit">Make key</button>
  </form>`;
}

export function namedKeysSection(ctx: PageContext, view: NamedKeysView): Html {
  return html`<section class="card named-keys" aria-labelledby="named-keys-title">
    <h2 id="named-keys-title">Named keys</h2>
    <p>
      Keys besides the primary one, each for one purpose: only the scopes it needs, an expiry, the networks it
      may be used from. Revoking one leaves the others working.
    </p>
    ${view.created ? createdPanel(view.created) : ''} ${keysTable(ctx, view.keys)}
    ${createForm(ctx, view.form, view.grantable ?? API_KEY_SCOPES)}
  </section>`;
}

/** The dashboard's pages: plain server-rendered HTML, one small script (static/app.js), no inline script or style. */
import { plural } from '@subx/errors';
import type { Html } from './html.ts';
import { html } from './html.ts';
import { legend, stackedBarChart } from './chart.ts';
import { timeTag } from './dates.ts';
import { dataTable } from './table.ts';
import type { SampleVideo } from './first-request.ts';
import { shellQuote, videoUrl } from './first-request.ts';
import { securedSummary } from './secured-summary.ts';
import type {
  AccountLimits,
  AccountUsage,
  CallResult,
  GatewayAccount,
  SecuredAccount,
} from '../gateway/client.ts';
import { TIERS } from '../gateway/client.ts';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../auth/passwords.ts';
import type { UserDoc } from '../auth/users.ts';
import { roleMay, type WorkspacePermission, type WorkspaceRole } from '@subx/contracts/workspaces';

interface Viewer {
  email: string;
  verified: boolean;
  operator: boolean;
  /** The role in the current workspace, when this request looked it up: the nav shows what it may open. */
  role: WorkspaceRole | null;
}

export interface PageContext {
  csrf: string;
  viewer: Viewer | null;
  /** Path of the current page (marks the nav link). */
  path: string;
}

export interface Notice {
  kind: 'ok' | 'error';
  text: string;
}

export function csrfField(ctx: PageContext): Html {
  return html`<input type="hidden" name="_csrf" value="${ctx.csrf}" />`;
}

function nav(ctx: PageContext): Html {
  if (!ctx.viewer) {
    return html`<nav aria-label="Main">
      <ul>
        <li><a href="/sign-in" ${ctx.path === '/sign-in' ? html` aria-current="page"` : ''}>Sign in</a></li>
        <li><a href="/sign-up" ${ctx.path === '/sign-up' ? html` aria-current="page"` : ''}>Sign up</a></li>
      </ul>
    </nav>`;
  }
  const pages: [string, string, WorkspacePermission][] = [
    ['/keys', 'API key', 'keys:read'],
    ['/usage', 'Usage', 'usage:read'],
    ['/playground', 'Playground', 'playground:use'],
    ['/jobs', 'Jobs', 'jobs:read'],
    ['/watches', 'Watches', 'jobs:read'],
    ['/webhooks', 'Webhooks', 'webhooks:manage'],
    ['/members', 'Members', 'members:read'],
    ['/retention', 'Data retention', 'settings:manage'],
    ['/audit', 'Audit log', 'audit:read'],
  ];
  const role = ctx.viewer.role;
  const links: [string, string][] = pages
    .filter(([, , permission]) => role === null || roleMay(role, permission))
    .map(([href, label]) => [href, label]);
  if (ctx.viewer.operator) links.push(['/operators', 'Operators']);
  return html`<nav aria-label="Main">
    <ul>
      ${links.map(
        ([href, label]) =>
          html`<li>
            <a href="${href}" ${ctx.path === href ? html` aria-current="page"` : ''}>${label}</a>
          </li>`,
      )}
      <li>
        <form method="post" action="/sign-out" class="inline">
          ${csrfField(ctx)}<button type="submit" class="link">Sign out</button>
        </form>
      </li>
    </ul>
  </nav>`;
}

export function layout(ctx: PageContext, title: string, body: Html, notice?: Notice | null): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · subx dashboard</title>
        <link rel="icon" href="/favicon.ico" type="image/svg+xml" />
        <link rel="stylesheet" href="/static/app.css" />
        <script src="/static/app.js" defer></script>
      </head>
      <body>
        <a class="skip" href="#main">Skip to content</a>
        <header>
          <p class="brand"><a href="/">subx</a></p>
          ${nav(ctx)}${ctx.viewer ? html`<p class="who">${ctx.viewer.email}</p>` : ''}
        </header>
        <main id="main">
          <h1>${title}</h1>
          ${notice ? html`<p class="notice ${notice.kind}" role="${notice.kind === 'error' ? 'alert' : 'status'}">${notice.text}</p>` : ''}
          ${body}
        </main>
      </body>
    </html>`.value;
}

function emailField(autocomplete: 'email' | 'username', value = ''): Html {
  return html`<label for="email">Email</label
    ><input
      id="email"
      name="email"
      type="email"
      autocomplete="${autocomplete}"
      required
      maxlength="254"
      value="${value}"
    />`;
}

/** A new password (sign-up, reset) states and checks the minimum; the current one does not. */
function passwordField(label: string, kind: 'new' | 'current', name = 'password'): Html {
  const isNew = kind === 'new';
  return html`<label for="${name}"
      >${label}${isNew ? html` <span class="hint">(at least ${MIN_PASSWORD_LENGTH} characters)</span>` : ''}</label
    ><input
      id="${name}"
      name="${name}"
      type="password"
      autocomplete="${isNew ? 'new-password' : 'current-password'}"
      required
      ${isNew ? html`minlength="${MIN_PASSWORD_LENGTH}"` : ''}
      maxlength="${MAX_PASSWORD_LENGTH}"
    />`;
}

export function signUpPage(ctx: PageContext, notice?: Notice | null, email = ''): string {
  return layout(
    ctx,
    'Create an account',
    html`<form method="post" action="/sign-up" class="card">
        ${csrfField(ctx)} ${emailField('email', email)} ${passwordField('Password', 'new')}
        <button type="submit">Sign up</button>
      </form>
      <p>Already have an account? <a href="/sign-in">Sign in</a>.</p>`,
    notice,
  );
}

export function signInPage(ctx: PageContext, notice?: Notice | null, email = ''): string {
  return layout(
    ctx,
    'Sign in',
    html`<form method="post" action="/sign-in" class="card">
        ${csrfField(ctx)} ${emailField('username', email)} ${passwordField('Password', 'current')}
        <button type="submit">Sign in</button>
      </form>
      <p><a href="/forgot">Forgot your password?</a> · <a href="/sign-up">Create an account</a></p>`,
    notice,
  );
}

/** Operator step-up: the password again before operator pages and actions. */
export function reauthPage(ctx: PageContext, next: string, notice?: Notice | null): string {
  return layout(
    ctx,
    'Confirm it is you',
    html`<form method="post" action="/reauth" class="card">
      ${csrfField(ctx)}<input type="hidden" name="next" value="${next}" />
      <p>Operator pages need your password again every few minutes.</p>
      ${passwordField('Password', 'current')}
      <button type="submit">Continue</button>
    </form>`,
    notice,
  );
}

export function messagePage(
  ctx: PageContext,
  title: string,
  text: string,
  kind: Notice['kind'] = 'ok',
): string {
  return layout(ctx, title, html`<p><a href="/">Continue</a></p>`, { kind, text });
}

/**
 * "Check your inbox". Without SMTP_URL no mail leaves the machine: the page says where the mail and
 * its link appear instead (`npm run demo`: the console it runs in), or a newcomer waits for nothing.
 */
export function inboxPage(ctx: PageContext, text: string, mailsShownIn: string | null): string {
  const note = mailsShownIn
    ? html`<p class="card console-mail" id="console-mail">
        No mail server is configured here (<code>SMTP_URL</code> is unset): the mail, with its link, appears
        in ${mailsShownIn} instead. Open the link from there.
      </p>`
    : '';
  return layout(
    ctx,
    'Check your inbox',
    html`${note}
      <p><a href="/">Continue</a></p>`,
    { kind: 'ok', text },
  );
}

/**
 * Confirming proves the mailbox (the link) and who chose the password: the person enters the
 * password the address signed up with, or chooses a new one (which ends every other session). A
 * person signed in as the account needs neither.
 */
export function verifyPage(
  ctx: PageContext,
  token: string,
  options: { signedInAsOwner: boolean },
  notice?: Notice | null,
): string {
  const tokenField = html`${csrfField(ctx)}<input type="hidden" name="token" value="${token}" />`;
  if (options.signedInAsOwner) {
    return layout(
      ctx,
      'Confirm your email',
      html`<form method="post" action="/verify" class="card">
        ${tokenField}
        <p>Confirm this address to generate API keys.</p>
        <button type="submit">Confirm my email</button>
      </form>`,
      notice,
    );
  }
  return layout(
    ctx,
    'Confirm your email',
    html`<form method="post" action="/verify" class="card">
        ${tokenField}
        <p>Enter the password you signed up with to confirm this address.</p>
        ${passwordField('Password', 'current')}
        <button type="submit">Confirm my email</button>
      </form>
      <form method="post" action="/verify" class="card">
        ${tokenField}
        <p>
          Did not sign up yourself, or forgot the password? Choose your own: any other password for this
          address stops working.
        </p>
        ${passwordField('New password', 'new', 'new_password')}
        <button type="submit">Confirm with this password</button>
      </form>`,
    notice,
  );
}

/** After a reset: the account's key was replaced, and the new one is shown this once. */
export function passwordChangedPage(ctx: PageContext, secured: SecuredAccount | null): string {
  const newKey = secured?.api_key ?? null;
  const key = newKey
    ? html`<section class="card reveal" aria-labelledby="new-key-title">
        <h2 id="new-key-title">Your new API key</h2>
        <p>
          The previous key stopped working with the reset. Copy the new one now: it is shown
          <strong>once</strong>.
        </p>
        <p class="key-row">
          <code id="new-key" class="key">${newKey}</code>
          <button type="button" class="copy" data-copy="new-key">Copy</button>
        </p>
        <p class="copied" role="status" aria-live="polite"></p>
      </section>`
    : '';
  return layout(
    ctx,
    'Password changed',
    html`${key}${secured ? securedSummary(secured) : ''}
      <p><a href="/sign-in">Sign in</a></p>`,
    {
      kind: 'ok',
      text: 'Your password is changed and every session is signed out. Sign in with the new one.',
    },
  );
}

export function forgotPage(ctx: PageContext, notice?: Notice | null): string {
  return layout(
    ctx,
    'Reset your password',
    html`<form method="post" action="/forgot" class="card">
      ${csrfField(ctx)} ${emailField('email')}
      <button type="submit">Email me a reset link</button>
    </form>`,
    notice,
  );
}

export function resetPage(ctx: PageContext, token: string, notice?: Notice | null): string {
  return layout(
    ctx,
    'Choose a new password',
    html`<form method="post" action="/reset" class="card">
      ${csrfField(ctx)}<input type="hidden" name="token" value="${token}" />
      ${passwordField('New password', 'new')}
      <button type="submit">Set password</button>
    </form>`,
    notice,
  );
}

/**
 * The page body of a person without a workspace: before the address is confirmed, how to confirm
 * it; after, the workspace was deleted (theirs, or by whoever else belonged to it).
 */
export function unverified(ctx: PageContext): Html {
  if (ctx.viewer?.verified) return noWorkspace();
  return html`<div class="card">
    <p>Confirm your email address first: we sent you a link.</p>
    <form method="post" action="/verify/resend">
      ${csrfField(ctx)}<button type="submit">Send the link again</button>
    </form>
  </div>`;
}

export function noWorkspace(): Html {
  return html`<div class="card" id="no-workspace">
    <p>You have no workspace: it was deleted, with its keys, jobs, watches and audit log.</p>
  </div>`;
}

/** A dangerous action: a required confirmation box (checked by the server too), and a dialog with JavaScript. */
export function confirmedForm(
  ctx: PageContext,
  o: { action: string; id: string; dialog: string; label: string; button: Html },
): Html {
  return html`<form method="post" action="${o.action}" class="confirm" data-confirm="${o.dialog}">
    ${csrfField(ctx)}
    <p>
      <input type="checkbox" id="${o.id}" name="confirm" value="yes" required />
      <label for="${o.id}">${o.label}</label>
    </p>
    ${o.button}
  </form>`;
}

export function usagePage(
  ctx: PageContext,
  data: { limits: AccountLimits; usage: AccountUsage } | null,
): string {
  if (!data) return layout(ctx, 'Usage', unverified(ctx));
  const { limits, usage } = data;
  const daily = limits.daily;
  const percent = daily.limit ? Math.min(100, Math.round((daily.used / daily.limit) * 100)) : 0;
  const ops = Object.keys(usage.days[0]?.operations ?? {});
  const body = html`<div class="stats">
      <div class="card">
        <h2>Today</h2>
        <p class="big" id="today-requests">
          ${daily.limit === null ? plural(daily.used, 'request') : html`${daily.used} <span class="of">/ ${daily.limit}</span> requests`}
        </p>
        ${daily.limit === null ? html`<p>Unlimited tier.</p>` : html`<progress max="${daily.limit}" value="${daily.used}" aria-label="Requests today against the daily limit">${percent}%</progress>`}
        <p class="hint">Resets at ${timeTag(daily.reset_at)}.</p>
      </div>
      <div class="card">
        <h2>Credits</h2>
        <p class="big" id="credit-balance">${limits.credits.balance}</p>
        <p class="hint">
          Monthly allowance ${limits.credits.monthly_allowance}, granted at the start of each UTC month.
        </p>
      </div>
      <div class="card">
        <h2>Tier</h2>
        <p class="big" id="tier">${limits.tier}</p>
      </div>
    </div>
    <h2>Last 30 days</h2>
    <p>${plural(usage.total_requests, 'request')}, ${plural(usage.total_credits, 'credit')}.</p>
    ${legend()}
    <figure>
      ${stackedBarChart({ id: 'requests-chart', title: 'Requests per day by operation', days: usage.days, metric: 'requests' })}
      <figcaption>Requests per day</figcaption>
    </figure>
    <figure>
      ${stackedBarChart({ id: 'credits-chart', title: 'Credits per day by operation', days: usage.days, metric: 'credits' })}
      <figcaption>Credits per day</figcaption>
    </figure>
    <details>
      <summary>The numbers as a table</summary>
      ${dataTable({
        label: 'Usage per day',
        caption: 'Requests and credits per day (requests / credits)',
        columns: ['Date', 'Total', ...ops],
        rows: usage.days.map(
          (d) =>
            html`<tr>
              <th scope="row">${d.date}</th>
              <td>${d.requests} / ${d.credits}</td>
              ${ops.map((op) => html`<td>${d.operations[op]?.requests ?? 0} / ${d.operations[op]?.credits ?? 0}</td>`)}
            </tr>`,
        ),
      })}
    </details>`;
  return layout(ctx, 'Usage', body);
}

export interface PlaygroundInput {
  operation: 'extract' | 'validate';
  url: string;
  format: string;
  language: string;
}

export const FORMATS = ['json', 'srt', 'vtt', 'txt', 'md'] as const;

export function curlFor(apiUrl: string, input: PlaygroundInput): string {
  if (input.operation === 'validate') {
    return `curl -s ${shellQuote(`${apiUrl}/api/v1/validate?url=${encodeURIComponent(input.url)}`)}`;
  }
  const body: Record<string, string> = { url: input.url };
  if (input.format && input.format !== 'json') body.format = input.format;
  if (input.language) body.language = input.language;
  return [
    `curl -s -X POST ${shellQuote(`${apiUrl}/api/v1/extract`)}`,
    `  -H 'X-API-Key: <API_KEY>'`,
    `  -H 'content-type: application/json'`,
    `  -d ${shellQuote(JSON.stringify(body))}`,
  ].join(' \\\n');
}

export function playgroundPage(
  ctx: PageContext,
  options: {
    apiUrl: string;
    input: PlaygroundInput;
    result: CallResult | null;
    available: boolean;
    /** `npm run demo`: the videos its replay has, offered next to the URL field. */
    demoVideos: readonly SampleVideo[];
  },
  notice?: Notice | null,
): string {
  const { input, result, demoVideos } = options;
  const demo = demoVideos.length
    ? html`<datalist id="demo-videos">
          ${demoVideos.map((v) => html`<option value="${videoUrl(v.id)}">${v.shows}</option>`)}
        </datalist>
        <details class="demo-videos" id="demo-video-list">
          <summary>
            Videos this demo replays (the platform is a local recording: other videos are not found)
          </summary>
          <ul>
            ${demoVideos.map((v) => html`<li><code>${videoUrl(v.id)}</code>: ${v.shows}</li>`)}
          </ul>
        </details>`
    : '';
  const form = html`<form method="post" action="/playground" class="card">
    ${csrfField(ctx)}
    <fieldset>
      <legend>Operation</legend>
      <p>
        <input
          type="radio"
          id="op-extract"
          name="operation"
          value="extract"
          ${input.operation === 'extract' ? html` checked` : ''}
        />
        <label for="op-extract">Extract subtitles (<code>POST /api/v1/extract</code>)</label>
      </p>
      <p>
        <input
          type="radio"
          id="op-validate"
          name="operation"
          value="validate"
          ${input.operation === 'validate' ? html` checked` : ''}
        />
        <label for="op-validate">Validate a video (<code>GET /api/v1/validate</code>)</label>
      </p>
    </fieldset>
    <label for="url">Video URL</label
    ><input
      id="url"
      name="url"
      type="url"
      required
      maxlength="2048"
      value="${input.url}"
      placeholder="https://www.youtube.com/watch?v=..."
      ${demoVideos.length ? html` list="demo-videos"` : ''}
    />
    ${demo}
    <label for="format">Format (extract)</label
    ><select id="format" name="format">
      ${FORMATS.map((f) => html`<option value="${f}" ${f === input.format ? html` selected` : ''}>${f}</option>`)}
    </select>
    <label for="language">Language (extract, optional)</label
    ><input id="language" name="language" maxlength="35" value="${input.language}" placeholder="en" />
    <button type="submit" ${options.available ? '' : html` disabled`}>Run</button>
    ${options.available ? '' : html`<p class="hint">Generate an API key first: the playground calls the API as your key would.</p>`}
  </form>`;
  const out = result
    ? html`<h2>Response <span class="status" id="result-status">${result.status}</span></h2>
        <pre id="result-body" tabindex="0" aria-label="Response body">
${typeof result.body === 'string' ? result.body : JSON.stringify(result.body, null, 2)}</pre>`
    : '';
  const curl = html`<h2>The same call with curl</h2>
    <pre id="curl" tabindex="0" aria-label="curl command">${curlFor(options.apiUrl, input)}</pre>
    <p class="hint">
      Replace <code>&lt;API_KEY&gt;</code> with your key. Calls from this page run on your account: they count
      and are billed like calls with your key.
    </p>`;
  return layout(ctx, 'Playground', html`${form}${out}${curl}`, notice);
}

export interface OperatorRow {
  user: UserDoc;
  account: GatewayAccount | null;
}

export function operatorsPage(
  ctx: PageContext,
  rows: OperatorRow[],
  page: { number: number; pages: number; total: number },
  notice?: Notice | null,
): string {
  const body = html`<p>${page.total} people, page ${page.number} of ${page.pages}.</p>
    ${dataTable({
      className: 'accounts',
      label: 'Accounts',
      caption: 'Accounts',
      columns: ['Email', 'Account', 'Tier', 'Credits', 'Key', 'Today', 'Actions'],
      rows: rows.map(({ user, account }) => {
        if (!account) {
          return html`<tr>
            <th scope="row">${user.email}</th>
            <td colspan="6">${user.email_verified ? 'account unavailable' : 'email not verified'}</td>
          </tr>`;
        }
        const id = account.account_id;
        return html`<tr>
          <th scope="row">${user.email}</th>
          <td><code>${id}</code></td>
          <td>${account.tier}</td>
          <td>${account.credits}</td>
          <td>
            ${account.key.status === 'active' ? html`<code>${account.key.prefix}…${account.key.last4}</code>` : 'none'}
          </td>
          <td>${account.usage.today_requests}</td>
          <td>
            <form method="post" action="/operators/accounts/${id}" class="row-form">
              ${csrfField(ctx)} <label for="tier-${id}">Tier</label
              ><select id="tier-${id}" name="tier">
                ${TIERS.map((t) => html`<option value="${t}" ${t === account.tier ? html` selected` : ''}>${t}</option>`)}
              </select>
              <label for="add-${id}">Add credits</label
              ><input
                id="add-${id}"
                name="add_credits"
                type="number"
                min="0"
                step="1"
                value="0"
                inputmode="numeric"
              />
              <button type="submit">Save</button>
            </form>
            ${account.key.status === 'active' ? html`<form method="post" action="/operators/accounts/${id}/revoke" class="row-form confirm" data-confirm="Revoke this account's key? Its watches are paused, its jobs canceled and its webhook secret replaced.">${csrfField(ctx)}<button type="submit" class="danger">Revoke key</button></form>` : ''}
          </td>
        </tr>`;
      }),
    })}
    <nav aria-label="Pages" class="pager">
      ${page.number > 1 ? html`<a href="/operators?page=${page.number - 1}">Previous</a>` : ''}
      ${page.number < page.pages ? html`<a href="/operators?page=${page.number + 1}">Next</a>` : ''}
    </nav>`;
  return layout(ctx, 'Operators', body, notice);
}

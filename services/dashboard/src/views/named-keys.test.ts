/** The named keys section as rendered: the table, the once-shown key, the form and its refill. */
import { describe, expect, it } from 'vitest';
import { API_KEY_SCOPE_DESCRIPTIONS, API_KEY_SCOPES } from '../gateway/client.ts';
import type { ApiKeyInfo } from '../gateway/client.ts';
import { namedKeysSection } from './named-keys.ts';
import type { PageContext } from './pages.ts';

const ctx: PageContext = {
  csrf: 'csrf-token-123',
  viewer: { email: 'a@example.com', verified: true, operator: false, role: null },
  path: '/keys',
};

const key = (over: Partial<ApiKeyInfo>): ApiKeyInfo => ({
  id: 'key_0001',
  name: 'CI pipeline',
  primary: false,
  scopes: ['transcripts:read'],
  prefix: 'sxk_v1_',
  last4: 'ab12',
  status: 'active',
  created_at: '2026-03-01T10:00:00.000Z',
  expires_at: null,
  allowed_cidrs: null,
  last_used_at: null,
  ...over,
});

const rowOf = (body: string, id: string) =>
  new RegExp(`<tr data-key-id="${id}">[\\s\\S]*?</tr>`).exec(body)?.[0] ?? '';

describe('named keys section', () => {
  it('lists each key with its scopes, status, dates and networks, and a confirmed Revoke with CSRF', () => {
    const body = namedKeysSection(ctx, {
      keys: [
        key({}),
        key({
          id: 'key_0002',
          name: 'Office <script>',
          scopes: ['jobs', 'ai'],
          expires_at: '2026-12-02T00:00:00.000Z',
          allowed_cidrs: ['203.0.113.0/24', '2001:db8::/32'],
          last_used_at: '2026-03-02T08:15:00.000Z',
        }),
        key({ id: 'key_0003', name: 'old', status: 'revoked' }),
      ],
      created: null,
    }).value;
    const first = rowOf(body, 'key_0001');
    expect(first).toContain('CI pipeline');
    expect(first).toContain('<code>transcripts:read</code>');
    expect(first).toContain('class="status-active">active<');
    expect(first).toContain('<time datetime="2026-03-01T10:00:00.000Z">1 Mar 2026, 10:00 UTC</time>');
    expect(first).toContain('anywhere');
    expect(first).toMatch(/<td>never<\/td>\s*<td>anywhere<\/td>\s*<td>never<\/td>/);
    expect(first).toContain('action="/keys/named/key_0001/revoke"');
    expect(first).toContain('name="_csrf" value="csrf-token-123"');
    expect(first).toMatch(
      /<input type="checkbox" id="confirm-revoke-key_0001" name="confirm" value="yes" required/,
    );

    const second = rowOf(body, 'key_0002');
    expect(second).toContain('Office &lt;script&gt;');
    expect(second).not.toContain('<script>');
    expect(second).toContain('2 Dec 2026, 00:00 UTC');
    expect(second).toContain('<code>203.0.113.0/24</code><br /><code>2001:db8::/32</code>');
    expect(second).toContain('2 Mar 2026, 08:15 UTC');

    // A revoked key has nothing left to revoke.
    const third = rowOf(body, 'key_0003');
    expect(third).toContain('class="status-revoked">revoked<');
    expect(third).not.toContain('<form');
    expect(body).not.toContain('id="new-named-key"');
  });

  it('shows a key just made once, and says so when there are none or the list is unavailable', () => {
    const made = namedKeysSection(ctx, {
      keys: [key({})],
      created: { name: 'CI pipeline', apiKey: 'sxk_v1_0123456789abcdefghijklmnopqrstuv' },
    }).value;
    expect(made).toContain(
      '<code id="new-named-key" class="key">sxk_v1_0123456789abcdefghijklmnopqrstuv</code>',
    );
    expect(made).toContain('shown <strong>once</strong>');
    expect(namedKeysSection(ctx, { keys: [], created: null }).value).toContain('id="no-named-keys"');
    const unavailable = namedKeysSection(ctx, { keys: null, created: null }).value;
    expect(unavailable).toContain('id="named-keys-unavailable"');
    // The form stays: making a key does not need the list.
    expect(unavailable).toContain('action="/keys/named"');
  });

  it('offers a checkbox per scope with the contract’s description, the expiry rule and the networks', () => {
    const body = namedKeysSection(ctx, { keys: [], created: null }).value;
    for (const scope of API_KEY_SCOPES) {
      expect(body).toMatch(
        new RegExp(
          `<input\\s+type="checkbox"\\s+id="scope-${scope}"\\s+name="scope:${scope}"\\s+value="yes"\\s*/>`,
        ),
      );
      const description = API_KEY_SCOPE_DESCRIPTIONS[scope].replace(/'/g, '&#39;');
      expect(body).toContain(description);
    }
    expect(body).toMatch(/type="date"/);
    expect(body).toMatch(/stops at 00:00 UTC the day\s+after/);
    expect(body).toContain('<textarea id="key-networks" name="allowed_networks"');
  });

  it('fills the form in again as it was sent', () => {
    const body = namedKeysSection(ctx, {
      keys: [],
      created: null,
      form: {
        name: 'Nightly "sync"',
        scopes: ['jobs'],
        expiresOn: '2026-12-01',
        networks: '10.0.0.0/8\nnope',
      },
    }).value;
    expect(body).toContain('value="Nightly &quot;sync&quot;"');
    expect(body).toMatch(/name="scope:jobs"\s+value="yes"\s+checked/);
    expect(body).not.toMatch(/name="scope:ai"\s+value="yes"\s+checked/);
    expect(body).toContain('value="2026-12-01"');
    expect(body).toContain('10.0.0.0/8\nnope</textarea>');
  });
});

/** The audit log page as rendered: actions in words, who did it, the details, and the pager. */
import { describe, expect, it } from 'vitest';
import { auditEventSchema } from '@subx/contracts/audit';
import type { AuditEventView } from '../gateway/client.ts';
import { actionText, auditLogPage } from './audit-page.ts';
import type { PageContext } from './pages.ts';

const ctx: PageContext = {
  csrf: 'csrf-token-123',
  viewer: { email: 'owner@example.com', verified: true, operator: false, role: null },
  path: '/audit',
};

const event = (over: Partial<AuditEventView>): AuditEventView => ({
  id: 'aud_1',
  at: '2026-03-01T10:00:00.000Z',
  account_id: 'acct_1',
  action: 'key.created',
  actor: { type: 'member', id: 'usr_1' },
  target: { type: 'key', id: 'key_1' },
  source_ip: '198.51.100.7',
  details: {},
  ...over,
});

const rows = (body: string) => [...body.matchAll(/<tr data-action="[^"]+">[\s\S]*?<\/tr>/g)].map((m) => m[0]);

describe('audit log page', () => {
  it('writes each event in words: when, what, who, on what, from where, its details', () => {
    const body = auditLogPage(ctx, {
      page: {
        events: [
          event({
            details: {
              name: 'CI <x>',
              scopes: ['transcripts:read', 'jobs'],
              expires_at: null,
              allowed_cidrs: [],
            },
          }),
          event({ id: 'aud_2', action: 'scope.refused', actor: { type: 'key', id: 'key_9' }, target: null }),
          event({
            id: 'aud_3',
            action: 'account.updated',
            actor: { type: 'operator', id: null },
            source_ip: null,
          }),
          event({ id: 'aud_4', action: 'sign_in.failed', actor: { type: 'member', id: null }, target: null }),
          event({ id: 'aud_5', action: 'sign_in.succeeded', actor: { type: 'member', id: 'usr_other' } }),
          event({ id: 'aud_6', action: 'something.new' }),
        ],
        next_cursor: null,
      },
      members: new Map([['usr_1', 'owner@example.com']]),
      older: false,
    });
    const [made, refused, operator, failed, stranger, unknown] = rows(body);
    expect(made).toContain('<time datetime="2026-03-01T10:00:00.000Z">1 Mar 2026, 10:00 UTC</time>');
    expect(made).toContain('<th scope="row">Key made</th>');
    expect(made).toContain('<td>owner@example.com</td>');
    expect(made).toContain('key <code>key_1</code>');
    expect(made).toContain('<code>198.51.100.7</code>');
    expect(made).toContain('CI &lt;x&gt;');
    expect(made).toContain('transcripts:read, jobs');
    expect(made).toMatch(/expires_at:<\/span> none/);
    expect(made).toMatch(/allowed_cidrs:<\/span> none/);
    expect(refused).toContain('Call refused: the key lacks the scope');
    expect(refused).toContain('key <code>key_9</code>');
    expect(operator).toMatch(/<td>operator<\/td>/);
    expect(operator).toMatch(/<td>—<\/td>\s*<td>—<\/td>\s*<\/tr>/);
    expect(failed).toContain('unknown person');
    // Someone this page cannot name stays an id.
    expect(stranger).toContain('person <code>usr_other</code>');
    expect(unknown).toContain('<th scope="row">something.new</th>');
    expect(body).not.toContain('id="older-page"');
    expect(body).not.toContain('id="newest-page"');
  });

  it('links the older page by the cursor, and back to the newest from an older one', () => {
    const body = auditLogPage(ctx, {
      page: { events: [event({})], next_cursor: 'c/1+2=' },
      members: new Map(),
      older: true,
    });
    expect(body).toContain('<a id="older-page" href="/audit?cursor=c%2F1%2B2%3D">Older</a>');
    expect(body).toContain('<a id="newest-page" href="/audit">Newest</a>');
    const empty = auditLogPage(ctx, {
      page: { events: [], next_cursor: null },
      members: new Map(),
      older: false,
    });
    expect(empty).toContain('Nothing recorded yet.');
  });

  it('has words for every action the contract lists', () => {
    const listed = [...auditEventSchema.properties.action.description.matchAll(/`([a-z_]+\.[a-z_]+)`/g)].map(
      (m) => m[1]!,
    );
    expect(listed.length).toBeGreaterThan(10);
    for (const action of listed) expect(actionText(action), action).not.toBe(action);
  });
});

/**
 * The MCP server at /mcp of `npm run demo` (recorded videos, no network), driven by the
 * official TypeScript SDK's Client over StreamableHTTPClientTransport, as an agent would. Every tool
 * on a recorded video, errors as tool errors, auth, the free tier's daily limit and credits.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { spawnLauncher, EMBEDDED_ENV, type Launcher } from '@subx/embedded/launcher';
import { videoIds } from '@subx/testing/fake-youtube';

const ADMIN_TOKEN = 'mcp-system-test-admin-token-0123456789';
const DEMO_KEY = 'sxk_v1_demoDemoDemoDemoDemoDemoDemoDemo';
const PLAYLIST = 'https://www.youtube.com/playlist?list=PLsubxDemoPlaylist01';

let launcher: Launcher;
let base = '';
/** The admin listener the banner names (`admin API: <url>`): the public port has no /admin. */
let adminBase = '';
let accountId = '';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = Record<string, any>;

async function connect(headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'subx-system-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } }),
  );
  return client;
}

const text = (result: Loose) =>
  (result.content as { type: string; text: string }[]).map((c) => c.text).join('\n');

async function admin(path: string, init: RequestInit = {}): Promise<Loose> {
  const res = await fetch(`${adminBase}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
  });
  expect(res.status).toBeLessThan(300);
  return (await res.json()) as Loose;
}

let pro: Client;

beforeAll(async () => {
  launcher = spawnLauncher(['--demo'], {
    ...EMBEDDED_ENV,
    LOG_LEVEL: 'error',
    ADMIN_TOKEN,
    API_KEY_PEPPER: '',
  });
  const banner = await launcher.waitFor(/subx is running at (http:\/\/\S+)[\s\S]*\(account (\S+)\)/, 60_000);
  base = banner[1]!;
  accountId = banner[2]!;
  await launcher.waitFor(/Ctrl-C stops everything/, 30_000);
  adminBase = (await launcher.waitFor(/admin API: (http:\/\/\S+)/, 1_000))[1]!;
  pro = await connect({ Authorization: `Bearer ${DEMO_KEY}` });
}, 90_000);

afterAll(async () => {
  await pro?.close();
  await launcher?.stop();
});

describe('MCP server of npm run demo', () => {
  it('lists the tools with descriptions and input and output schemas', async () => {
    const { tools } = await pro.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'get_transcript',
        'check_subtitles',
        'get_video_metadata',
        'get_playlist_transcripts',
        'get_comments',
        'summarize_video',
        'analyze_comments',
        'search_videos',
        'get_account',
        'estimate_job',
        'create_job',
        'get_job',
        'get_job_results',
      ]),
    );
    for (const tool of tools) {
      expect(tool.description?.length).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
    }
    expect(launcher.output()).toContain('/mcp');
  });

  it('get_transcript gives a recorded video as markdown with title, channel and chapters; structuredContent matches', async () => {
    const result = (await pro.callTool({
      name: 'get_transcript',
      arguments: { url: `https://youtu.be/${videoIds.manualAndAuto}` },
    })) as Loose;
    expect(result.isError).toBeFalsy();
    const md = text(result);
    const s = result.structuredContent as Loose;
    expect(md.startsWith(`# ${s.title}`)).toBe(true);
    expect(md).toContain(`**Channel:** ${s.channel}`);
    expect(s.chapters.length).toBeGreaterThan(0);
    expect(md).toContain(`## ${s.chapters[0].title}`);
    expect(md).toMatch(/\[\d+:\d{2}\] \S/);
    expect(s.segments.length).toBeGreaterThan(0);
    expect(s.page.cursor).toBe('0');
    // The client validated structuredContent against the declared outputSchema already.
  });

  it('get_transcript pages a long transcript with the cursor, and srt pages are SubRip', async () => {
    const url = `https://youtu.be/${videoIds.manualAndAuto}`;
    let cursor: string | null = '0';
    let pages = 0;
    let segments = 0;
    let total = 0;
    while (cursor !== null && pages < 20) {
      const r = (await pro.callTool({
        name: 'get_transcript',
        arguments: { url, format: 'srt', cursor },
      })) as Loose;
      expect(r.isError).toBeFalsy();
      expect(text(r)).toMatch(/^1\n\d{2}:\d{2}:\d{2},\d{3} --> /);
      expect(text(r).length).toBeLessThan(25_000);
      const s = r.structuredContent as Loose;
      segments += s.segments.length;
      total = s.page.total_segments;
      cursor = s.page.next_cursor;
      pages += 1;
    }
    expect(cursor).toBeNull();
    expect(segments).toBe(total);
    const bad = (await pro.callTool({ name: 'get_transcript', arguments: { url, cursor: 'x' } })) as Loose;
    expect(bad.isError).toBe(true);
    expect(text(bad)).toContain('INVALID_REQUEST');
  });

  it('a bad URL is a tool error with INVALID_URL and whether to retry, not a protocol error', async () => {
    const result = (await pro.callTool({
      name: 'get_transcript',
      arguments: { url: 'https://example.com/not-a-video' },
    })) as Loose;
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('INVALID_URL');
    expect(text(result)).toContain('"retryable":false');
    const missing = (await pro.callTool({
      name: 'get_transcript',
      arguments: { url: `https://youtu.be/${videoIds.noCaptions}` },
    })) as Loose;
    expect(missing.isError).toBe(true);
    expect(text(missing)).toContain('NO_SUBTITLES');
  });

  it('check_subtitles, get_video_metadata, get_playlist_transcripts answer on recorded videos', async () => {
    const check = (await pro.callTool({
      name: 'check_subtitles',
      arguments: { url: `https://youtu.be/${videoIds.autoOnlyFrench}` },
    })) as Loose;
    expect(check.isError).toBeFalsy();
    expect(check.structuredContent.available_languages.auto_generated).toContain('fr');
    const meta = (await pro.callTool({
      name: 'get_video_metadata',
      arguments: { url: `https://youtu.be/${videoIds.manualAndAuto}` },
    })) as Loose;
    expect(meta.isError).toBeFalsy();
    expect(Object.keys(meta.structuredContent.metadata)).toEqual(
      expect.arrayContaining(['title', 'chapters', 'view_count', 'tags']),
    );
    const playlist = (await pro.callTool({
      name: 'get_playlist_transcripts',
      arguments: { url: PLAYLIST, max: 4 },
    })) as Loose;
    expect(playlist.isError).toBeFalsy();
    const videos = playlist.structuredContent.videos as Loose[];
    expect(videos.map((v) => v.success)).toEqual([true, true, false, false]);
    expect(playlist.structuredContent.credits_charged).toBe(2);
    expect(text(playlist)).toContain('NO_SUBTITLES');
  });

  it('comments, summary and analysis charge credits like their HTTP twins', async () => {
    const before = await admin(`/admin/v1/accounts/${accountId}`);
    const comments = (await pro.callTool({
      name: 'get_comments',
      arguments: { url: `https://youtu.be/${videoIds.syntheticComments}`, max: 20 },
    })) as Loose;
    expect(comments.isError).toBeFalsy();
    expect(comments.structuredContent).toMatchObject({ credits_used: 1 });
    expect(comments.structuredContent.comments.length).toBeGreaterThan(0);
    expect(text(comments)).toMatch(/^- /);
    const summary = (await pro.callTool({
      name: 'summarize_video',
      arguments: { video_url: `https://youtu.be/${videoIds.manualAndAuto}`, style: 'key_points' },
    })) as Loose;
    expect(summary.isError).toBeFalsy();
    expect(summary.structuredContent.credits_used).toBeGreaterThan(0);
    expect(text(summary)).toContain('# Summary of');
    const analysis = (await pro.callTool({
      name: 'analyze_comments',
      arguments: { video_url: `https://youtu.be/${videoIds.syntheticComments}`, sample_size: 20 },
    })) as Loose;
    expect(analysis.isError).toBeFalsy();
    expect(analysis.structuredContent.credits_used).toBe(3);
    const after = await admin(`/admin/v1/accounts/${accountId}`);
    const charged = 1 + (summary.structuredContent.credits_used as number) + 3;
    expect(before.credits - after.credits).toBe(charged);
  });

  it('without a key, or with a wrong one, /mcp is 401 with WWW-Authenticate; the SDK client cannot connect', async () => {
    for (const headers of [{}, { Authorization: 'Bearer sxk_v1_wrongwrongwrongwrongwrongwrong12' }]) {
      const res = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="subx"');
      expect(((await res.json()) as Loose).error.code).toBe('UNAUTHORIZED');
    }
    await expect(connect({})).rejects.toThrow();
  });

  it('a free key (X-API-Key) counts every tool call against its 100 a day; the 101st is a RATE_LIMITED tool error; Pro tools are TIER_REQUIRED', async () => {
    const account = await admin('/admin/v1/accounts', {
      method: 'POST',
      body: JSON.stringify({ tier: 'free' }),
    });
    const free = await connect({ 'X-API-Key': account.api_key as string });
    try {
      const url = `https://youtu.be/${videoIds.manualAndAuto}`;
      const denied = (await free.callTool({
        name: 'summarize_video',
        arguments: { video_url: url },
      })) as Loose;
      expect(denied.isError).toBe(true);
      expect(text(denied)).toContain('TIER_REQUIRED');
      const limits = await admin(`/admin/v1/accounts/${account.account_id ?? account.id}/limits`);
      expect(limits.daily.used).toBe(0);
      for (let i = 1; i <= 100; i += 1) {
        const r = (await free.callTool({
          name: 'get_transcript',
          arguments: { url, format: 'txt' },
        })) as Loose;
        expect(r.isError, text(r)).toBeFalsy();
        if (i === 1)
          expect((r.structuredContent as Loose).rate_limit).toMatchObject({ limit: 100, remaining: 99 });
      }
      const after = await admin(`/admin/v1/accounts/${account.account_id ?? account.id}/limits`);
      expect(after.daily).toMatchObject({ used: 100, remaining: 0, limit: 100 });
      const refused = (await free.callTool({ name: 'get_transcript', arguments: { url } })) as Loose;
      expect(refused.isError).toBe(true);
      expect(text(refused)).toContain('RATE_LIMITED');
      expect(text(refused)).toContain('retry_after_seconds');
    } finally {
      await free.close();
    }
  }, 120_000);

  it("the README's client configuration connects as written (the address aside)", async () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const section = readme.split(/^## MCP server \(AI agents\)$/m)[1]!;
    const config = JSON.parse(/```json\n([\s\S]*?)```/.exec(section)![1]!) as Loose;
    const server = config.mcpServers.subx as Loose;
    expect(server.type).toBe('http');
    const client = new Client({ name: 'readme', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(String(server.url).replace('http://localhost:8080', base)), {
        requestInit: { headers: server.headers as Record<string, string> },
      }),
    );
    try {
      expect((await client.listTools()).tools.length).toBe(13);
    } finally {
      await client.close();
    }
  });

  it('/llms.txt describes the API and the MCP endpoint', async () => {
    const res = await fetch(`${base}/llms.txt`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const body = await res.text();
    expect(body).toMatch(/^# subx/);
    for (const needle of [
      'POST /mcp',
      'get_transcript',
      'Authorization: Bearer',
      '/api/v1/extract',
      '/openapi.json',
    ])
      expect(body).toContain(needle);
  });
});

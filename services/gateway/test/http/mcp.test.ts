/**
 * The MCP endpoint in process (fake backends, test doubles of access control) with the SDK's own
 * client over a real socket: the tool table follows the operation table, every schema is valid
 * JSON Schema (compiled with ajv, as the MCP Inspector does), and the HTTP edges (405, batch cap,
 * idempotency through a tool).
 */
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { aiV1 } from '@subx/contracts';
import { OPERATION_SPECS, operationById } from '../../src/openapi/operations.ts';
import { buildTools, requestSchemaOf } from '../../src/mcp/tools.ts';
import { KEYS, VIDEO, VIDEO_URL, buildTestGateway } from './support.ts';
import type { TestGateway } from './support.ts';

let gw: TestGateway;
let base = '';
let client: Client;

beforeAll(async () => {
  gw = await buildTestGateway();
  base = (await gw.app.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1');
  client = new Client({ name: 't', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${KEYS.pro}` } },
    }),
  );
});
afterAll(async () => {
  await client?.close();
  await gw?.app.close();
});

const TWINS: Record<string, string> = {
  get_transcript: 'extract',
  check_subtitles: 'validate',
  get_video_metadata: 'extract',
  get_playlist_transcripts: 'playlist',
  get_comments: 'comments',
  search_videos: 'search',
  summarize_video: 'summarize',
  analyze_comments: 'analyzeComments',
  get_account: 'getAccount',
  estimate_job: 'createJob',
  create_job: 'createJob',
  get_job: 'getJob',
  get_job_results: 'getJobResults',
};

describe('MCP tools', () => {
  it('every input and output schema is valid JSON Schema (draft-07 and 2020-12) with an object root', async () => {
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(13);
    for (const tool of tools) {
      for (const schema of [tool.inputSchema, tool.outputSchema]) {
        expect(schema?.type).toBe('object');
        expect(() => new Ajv({ strict: false }).compile(schema!)).not.toThrow();
        expect(() => new Ajv2020({ strict: false }).compile(schema!)).not.toThrow();
      }
    }
  });

  it('input schemas and descriptions are the operation table’s, field for field', async () => {
    const { tools } = await client.listTools();
    for (const tool of tools) {
      const spec = operationById(TWINS[tool.name]!);
      const source = requestSchemaOf(spec).properties as Record<string, Record<string, unknown>>;
      for (const [name, schema] of Object.entries(tool.inputSchema.properties ?? {})) {
        if (name === 'cursor' || name === 'idempotency_key') continue;
        const { default: _toolDefault, ...rest } = schema as Record<string, unknown>;
        const { default: _apiDefault, ...expected } = source[name]!;
        expect(rest, `${tool.name}.${name}`).toEqual(expected);
      }
      expect(tool.description).toContain(spec.summary);
      expect(tool.description).toContain(spec.credits);
    }
    // Every operation but batch (get_playlist_transcripts and get_transcript cover it) has a tool.
    const covered = new Set(Object.values(TWINS));
    expect(OPERATION_SPECS.map((o) => o.operationId).filter((id) => !covered.has(id))).toEqual([
      // The per-format paths of extract: get_transcript takes `format`.
      'extractSrt',
      'extractVtt',
      'extractTxt',
      'extractMd',
      'batch',
      // An agent starts a job, polls it and pages its results; listing, one result as a download,
      // the chunks' NDJSON and canceling stay HTTP.
      'listJobs',
      'getJobResult',
      'getJobChunks',
      'cancelJob',
      // Watches run for weeks on a schedule: set up over HTTP, not by an agent in a conversation.
      'createWatch',
      'listWatches',
      'getWatch',
      'runWatch',
      'deleteWatch',
      // Account settings, not something an agent does with videos: no tools.
      'rotateWebhookSecret',
      'getWebhookSecret',
      // An agent does not make or revoke the keys it runs on.
      'listKeys',
      'createKey',
      'revokeKey',
      // Who changed what on the account: for its owner and their security tools, not an agent.
      'listAuditEvents',
      // Everything the account holds, for its owner's primary key: never an agent's.
      'exportAccount',
      // How long the account keeps its data: its owner's setting, not an agent's.
      'getAccountRetention',
      'updateAccountRetention',
    ]);
    expect(buildTools().map((t) => t.name)).toEqual(Object.keys(TWINS));
  });

  it('every tool is annotated: read-only exactly when it can charge nothing, never destructive, open-world unless it reads only the account and its jobs', async () => {
    const { tools } = await client.listTools();
    const readOnly = tools.filter((t) => t.annotations?.readOnlyHint).map((t) => t.name);
    expect(readOnly).toEqual([
      'check_subtitles',
      'get_video_metadata',
      'get_account',
      'estimate_job',
      'get_job',
      'get_job_results',
    ]);
    for (const tool of tools) {
      expect(tool.annotations, tool.name).toEqual({
        title: tool.title,
        readOnlyHint: readOnly.includes(tool.name),
        destructiveHint: false,
        // A second create_job starts a second job (unless it carries the same idempotency_key).
        idempotentHint: tool.name !== 'create_job',
        openWorldHint: !['get_account', 'get_job', 'get_job_results'].includes(tool.name),
      });
    }
  });

  it('search_videos lists a page of results as links, and passes cursor and filters through', async () => {
    const asked: unknown[] = [];
    gw.backends.handlers.search = async (req) => {
      asked.push(req);
      return {
        results: [
          {
            kind: 'video',
            id: 'dQw4w9WgXcQ',
            title: 'A [bracketed] title',
            channel: 'Chan',
            channelId: 'UCxxxxxxxxxxxxxxxxxxxxxx',
            durationSeconds: 212,
            publishedText: '2 days ago',
            viewCount: 1234n,
            thumbnail: '',
            isShort: false,
            isLive: false,
            isUpcoming: false,
            handle: '',
          },
        ],
        correctedQuery: 'rick astley',
        nextContinuation: 'TOKEN2',
        cached: false,
      };
    };
    const r = (await client.callTool({
      name: 'search_videos',
      arguments: { query: 'rick astly', sort: 'date' },
    })) as { content: { text: string }[]; structuredContent: Record<string, unknown>; isError?: boolean };
    expect(r.isError).toBeFalsy();
    expect(r.content[0]!.text).toContain('Showing results for "rick astley".');
    expect(r.content[0]!.text).toContain(
      '- [A bracketed title](https://www.youtube.com/watch?v=dQw4w9WgXcQ) (Chan, 3:32, 2 days ago, 1,234 views)',
    );
    const next = r.structuredContent.next_cursor as string;
    expect(next).toEqual(expect.any(String));
    expect(asked[0]).toMatchObject({ query: 'rick astly', filters: { sort: 'date' }, continuation: '' });
    await client.callTool({
      name: 'search_videos',
      arguments: { q: 'rick astly', sort: 'date', cursor: next },
    });
    expect(asked[1]).toMatchObject({ continuation: 'TOKEN2' });
  });

  it('get_transcript passes chunking and mode through to extract and answers the chunks', async () => {
    const r = (await client.callTool({
      name: 'get_transcript',
      arguments: {
        url: VIDEO_URL,
        format: 'txt',
        chunking: { max_tokens: 64, split: 'none' },
        mode: 'captions',
      },
    })) as { structuredContent: Record<string, unknown>; isError?: boolean; content: { text: string }[] };
    expect(r.isError, r.content[0]?.text).toBeFalsy();
    const chunks = r.structuredContent.chunks as { text: string; token_count: number }[];
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks.every((c) => c.token_count <= 64)).toBe(true);
    expect(r.structuredContent.source).toBe('captions');
  });

  it('a tool call is one counted request of its route, and its rate_limit is the route’s', async () => {
    const before = gw.access.used.get('acc_pro') ?? 0;
    const r = (await client.callTool({
      name: 'get_transcript',
      arguments: { url: VIDEO_URL, format: 'txt' },
    })) as {
      content: { text: string }[];
      structuredContent: Record<string, unknown>;
    };
    expect(r.content[0]!.text).toBe('Hello world\nSecond line\n');
    expect(gw.access.used.get('acc_pro')).toBe(before + 1);
    expect(gw.backends.calls.at(-1)?.method).toBe('getTranscript');
    expect((r.structuredContent.request_id as string).endsWith('.t1')).toBe(true);
  });

  it('check_subtitles says why a video has nothing to extract (validate’s reason)', async () => {
    gw.backends.handlers.validateVideo = async () => ({
      valid: false,
      hasSubtitles: false,
      manualLanguages: [],
      autoGeneratedLanguages: [],
      videoTitle: '',
      duration: 0,
      invalidReason: 'private',
      captionsPending: '',
      cached: false,
    });
    const r = (await client.callTool({ name: 'check_subtitles', arguments: { url: VIDEO_URL } })) as {
      content: { text: string }[];
      structuredContent: Record<string, unknown>;
    };
    expect(r.content[0]!.text).toBe('The video has nothing to extract: The video is private. (private).');
    expect(r.structuredContent.reason).toEqual({ code: 'private', message: 'The video is private.' });
  });

  it('bad arguments are INVALID_REQUEST tool errors, before any request is counted', async () => {
    const before = gw.access.used.get('acc_pro') ?? 0;
    const r = (await client.callTool({
      name: 'get_transcript',
      arguments: { url: VIDEO_URL, format: 'doc' },
    })) as {
      isError: boolean;
      content: { text: string }[];
    };
    expect(r.isError).toBe(true);
    expect(r.content[0]!.text).toMatch(/^INVALID_REQUEST: arguments\.format /);
    expect(gw.access.used.get('acc_pro')).toBe(before);
    const unknown = (await client.callTool({ name: 'nope', arguments: {} })) as { isError: boolean };
    expect(unknown.isError).toBe(true);
  });

  it('idempotency_key replays a charged call without charging twice', async () => {
    gw.backends.handlers.summarize = async (req): Promise<aiV1.SummarizeResponse> => ({
      videoId: req.videoId,
      summary: req.cachedOnly ? '' : 'A summary.',
      timestamps: [],
      videoTitle: 'T',
      videoDuration: 125,
      videoChannel: 'C',
      cached: false,
      model: 'local-extractive',
      generatedAt: req.cachedOnly ? '' : '2026-03-10T11:00:00.000Z',
      language: 'en',
    });
    const args = { video_url: VIDEO_URL, idempotency_key: 'mcp-idem-0001' };
    const balance = gw.ledger.balances.get('acc_pro')!;
    const first = (await client.callTool({ name: 'summarize_video', arguments: args })) as {
      isError?: boolean;
    };
    expect(first.isError).toBeFalsy();
    const charged = balance - gw.ledger.balances.get('acc_pro')!;
    const again = (await client.callTool({ name: 'summarize_video', arguments: args })) as {
      isError?: boolean;
    };
    expect(again.isError).toBeFalsy();
    expect(charged).toBe(2);
    expect(balance - gw.ledger.balances.get('acc_pro')!).toBe(charged);
  });

  it('summarize_video and analyze_comments take url as well as video_url; two different videos are refused', async () => {
    gw.backends.handlers.summarize = async (req): Promise<aiV1.SummarizeResponse> => ({
      videoId: req.videoId,
      summary: req.cachedOnly ? '' : 'A summary.',
      timestamps: [],
      videoTitle: 'T',
      videoDuration: 125,
      videoChannel: 'C',
      cached: false,
      model: 'local-extractive',
      generatedAt: req.cachedOnly ? '' : '2026-03-10T12:00:00.000Z',
      language: 'en',
    });
    const byUrl = (await client.callTool({ name: 'summarize_video', arguments: { url: VIDEO_URL } })) as {
      isError?: boolean;
      structuredContent?: { video_id: string };
    };
    expect(byUrl.isError).toBeFalsy();
    expect(byUrl.structuredContent?.video_id).toBe(VIDEO);
    for (const name of ['summarize_video', 'analyze_comments']) {
      const tool = (await client.listTools()).tools.find((t) => t.name === name)!;
      expect(Object.keys(tool.inputSchema.properties ?? {})).toEqual(
        expect.arrayContaining(['url', 'video_url']),
      );
      const both = (await client.callTool({
        name,
        arguments: { url: VIDEO_URL, video_url: 'https://youtu.be/jNQXAC9IVRw' },
      })) as { isError?: boolean; content: { text: string }[] };
      expect(both.isError).toBe(true);
      expect(both.content[0]!.text).toMatch(/^INVALID_REQUEST: body\.video_url/);
    }
  });

  it('GET /mcp is 405 (no standalone stream); a batch over 10 messages is 400', async () => {
    const get = await fetch(`${base}/mcp`, { headers: { authorization: `Bearer ${KEYS.pro}` } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    const batch = Array.from({ length: 11 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'tools/list' }));
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${KEYS.pro}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(batch),
    });
    expect(res.status).toBe(400);
  });
});

/**
 * The MCP server (Model Context Protocol, Streamable HTTP) at POST /mcp, and /llms.txt.
 *
 * Stateless: every POST gets a new low-level SDK `Server` and transport (the SDK's stateless
 * pattern), answering JSON (no SSE stream), so nothing outlives the request and any replica can
 * answer any request. GET and DELETE /mcp are 405 (no standalone stream, no sessions to end).
 * The caller's key (`Authorization: Bearer` or `X-API-Key`) is checked before the transport sees
 * the body: 401 with WWW-Authenticate without a valid one. Protocol messages (initialize,
 * tools/list) count nothing; each tool call runs its HTTP twin through the real route with the
 * caller's key (`fastify.inject`), so it is admitted, limited, charged, counted and logged by the
 * route itself. See README.md here.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Errors } from '@subx/errors';
import type { AccessControl } from '../access/types.ts';
import type { AccountReadLimiter } from '../access/rate-limit.ts';
import { apiKeyOf } from '../http/api-key-header.ts';
import { renderLlmsTxt } from './llms-txt.ts';
import type { AccessPricing } from '@subx/credits';
import { buildTools } from './tools.ts';
import { toolError } from './tool-kit.ts';
import type { McpTool } from './tools.ts';
import type { RouteAnswer, RouteCaller } from './tool-kit.ts';

const MCP_PATH = '/mcp';
/** JSON-RPC messages one POST may carry (a batch); each tool call is a request of the API. */
const MAX_BATCH = 10;

export interface McpOptions {
  access: AccessControl;
  /** Every MCP message counts as a free read (the handshake and tool list cost nothing else). */
  readLimiter: AccountReadLimiter;
  version: string;
  /** The deployment's pricing table, for /llms.txt's price list. */
  pricing?: AccessPricing;
}

/** Calls a route of this gateway as the MCP caller: same key, same client address. */
function routeCaller(app: FastifyInstance, outer: FastifyRequest, apiKey: string): RouteCaller {
  let calls = 0;
  return async ({ spec, params, body, query, idempotencyKey }) => {
    calls += 1;
    // The inner request's id names the MCP request it belongs to (when that keeps it well-formed).
    const innerId = `${outer.id}.t${calls}`;
    const response = await app.inject({
      method: spec.method,
      url: spec.path.replace(/\{(\w+)\}/g, (_, name: string) =>
        encodeURIComponent(String(params?.[name] ?? '')),
      ),
      headers: {
        'x-api-key': apiKey,
        ...(innerId.length <= 128 ? { 'x-request-id': innerId } : {}),
        ...(body ? { 'content-type': 'application/json' } : {}),
        ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
      },
      ...(query
        ? {
            query: Object.fromEntries(
              Object.entries(query).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : String(v)]),
            ),
          }
        : {}),
      ...(body ? { payload: JSON.stringify(body) } : {}),
      // validate's per-IP limit applies to the agent's address, not the gateway's own.
      remoteAddress: outer.ip,
    });
    const json = String(response.headers['content-type'] ?? '').startsWith('application/json');
    return {
      status: response.statusCode,
      headers: response.headers,
      body: json ? (JSON.parse(response.body) as unknown) : response.body,
    } satisfies RouteAnswer;
  };
}

function createServer(version: string, tools: McpTool[], caller: RouteCaller): Server {
  const server = new Server(
    { name: 'subx', title: 'subx subtitle extraction API', version },
    {
      capabilities: { tools: {} },
      instructions:
        'Transcripts, metadata, comments and AI summaries of YouTube videos. Tool errors carry the API error code and whether to retry. Long transcripts and comment lists come in pages: pass next_cursor as cursor.',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.map(({ name, title, description, inputSchema, outputSchema, annotations }) => ({
      name,
      title,
      description,
      inputSchema: inputSchema as { type: 'object' },
      outputSchema: outputSchema as { type: 'object' },
      annotations,
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = tools.find((t) => t.name === request.params.name);
    if (!tool) {
      return toolError({
        status: 404,
        headers: {},
        body: {
          error: {
            code: 'NOT_FOUND',
            message: `No tool ${request.params.name}; tools: ${tools.map((t) => t.name).join(', ')}.`,
            retryable: false,
          },
        },
      });
    }
    return tool.call(request.params.arguments, caller);
  });
  return server;
}

function webHeaders(request: FastifyRequest): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return headers;
}

export default async function mcpPlugin(app: FastifyInstance, options: McpOptions): Promise<void> {
  const tools = buildTools();
  const llmsTxt = renderLlmsTxt(tools, options.pricing);

  app.get('/llms.txt', async (_request, reply) =>
    reply.type('text/plain; charset=utf-8').header('cache-control', 'public, max-age=3600').send(llmsTxt),
  );

  app.post(
    MCP_PATH,
    {
      onRequest: async (request) => {
        // Expiry and source networks here; each tool call is then its route's, scope included.
        const account = await options.access.authorize({
          apiKey: apiKeyOf(request.headers),
          scope: null,
          sourceIp: request.ip,
        });
        await options.readLimiter.check(account.id);
      },
    },
    async (request, reply) => {
      if (Array.isArray(request.body) && request.body.length > MAX_BATCH) {
        throw Errors.invalidRequest(`A JSON-RPC batch may hold at most ${MAX_BATCH} messages.`);
      }
      const apiKey = apiKeyOf(request.headers)!;
      const server = createServer(options.version, tools, routeCaller(app, request, apiKey));
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      try {
        await server.connect(transport);
        const response = await transport.handleRequest(
          new Request(`http://gateway${MCP_PATH}`, { method: 'POST', headers: webHeaders(request) }),
          { parsedBody: request.body },
        );
        reply.code(response.status);
        response.headers.forEach((value, name) => {
          if (name !== 'content-length') reply.header(name, value);
        });
        return reply.send(await response.text());
      } finally {
        await transport.close().catch(() => {});
        await server.close().catch(() => {});
      }
    },
  );
}

/**
 * /llms.txt (llmstxt.org): the API and the MCP endpoint described for agents, built from the
 * operation table and the tool list, so it says what the code does.
 */
import { priceList } from '@subx/credits';
import type { AccessPricing } from '@subx/credits';
import { OPERATION_SPECS } from '../openapi/operations.ts';
import type { McpTool } from './tools.ts';
import { PAGE_CHARS } from './render.ts';

/** `pricing`: this deployment's table (ACCESS_PRICING_JSON over the defaults). */
export function renderLlmsTxt(tools: readonly McpTool[], pricing?: AccessPricing): string {
  const lines = [
    '# subx: subtitle extraction API',
    '',
    '> Transcripts (json, srt, vtt, txt, md), metadata, playlists, comments and AI summaries of YouTube videos, over HTTP and as MCP tools, with one API key, one daily limit and one credit balance.',
    '',
    'Authentication: the API key (`sxk_v1_` + 32 letters and digits) as `Authorization: Bearer <key>` or `X-API-Key: <key>`. A missing or wrong key is 401 with `WWW-Authenticate`. Every error body is `{ "error": { "code", "message", "docs_url", "request_id", "retryable" } }`.',
    '',
    '## MCP server',
    '',
    `- Endpoint: POST /mcp (Streamable HTTP, stateless, JSON answers). Client configuration: \`{ "mcpServers": { "subx": { "type": "http", "url": "<base>/mcp", "headers": { "Authorization": "Bearer <key>" } } } }\`.`,
    `- Each tool call is one request of its HTTP operation: same daily limit, tier, credits and usage. API errors are tool results with isError true, carrying the error code and whether to retry. Long transcripts and comment lists come in pages of about ${PAGE_CHARS} characters: pass next_cursor as cursor.`,
    '',
    ...tools.map((t) => `- ${t.name}: ${t.title}. ${t.description.split('\n')[0]}`),
    '',
    '## HTTP operations',
    '',
    ...OPERATION_SPECS.map(
      (op) =>
        `- ${op.method} ${op.path}: ${op.summary}. ${op.auth ? `Key${op.tier ? ', Pro tier or higher' : ''}` : 'No key'}; credits: ${op.credits}.`,
    ),
    '- GET /health: status and version, no key.',
    '',
    '## Credits',
    '',
    'Each paid answer says what it cost: `credits_used` (extract, search, comments, summaries, and each batch, playlist and job item), `credits_charged` (a batch, playlist or job as a whole). A request that fails costs nothing.',
    '',
    ...priceList(pricing).map((entry) => `- ${entry.what}: ${entry.costs}.`),
    '',
    '## Docs',
    '',
    '- [OpenAPI 3.1 document](/openapi.json): every operation, parameter, response and error',
    '- [API reference](/docs/)',
    '- [Error codes](/docs/errors)',
    '',
  ];
  return lines.join('\n');
}

/** search_videos: GET /api/v1/search as a markdown list of links a model can pass to get_transcript. */
import { rateLimitSchema } from '@subx/public-api';
import { operationById } from '../openapi/operations.ts';
import { isOk, keyOf, ok, requestFields, str, toolError } from './tool-kit.ts';
import type { Body, ToolDefinition } from './tool-kit.ts';

export const searchVideosTool: ToolDefinition = {
  name: 'search_videos',
  spends: true,
  operationId: 'search',
  title: 'Search YouTube',
  lead: "Searches the platform: one page of results (about 20) in its order, as a markdown list with each video's URL, ready for get_transcript. Pass next_cursor as cursor for the next page.",
  fields: ['query', 'q', 'type', 'upload_date', 'duration', 'sort', 'features', 'cursor'],
  outputSchema: {
    type: 'object',
    required: ['query', 'results', 'next_cursor'],
    properties: {
      query: str,
      corrected_query: str,
      results: (operationById('search').response.properties as Body).results,
      next_cursor: {
        type: ['string', 'null'],
        description: 'Pass as cursor for the next page; null at the end.',
      },
      cached: { type: 'boolean' },
      credits_used: { type: 'integer' },
      rate_limit: rateLimitSchema,
      request_id: str,
    },
  },
  async run(args, call, spec) {
    const answer = await call({ spec, query: requestFields(args, ['cursor']), ...keyOf(args) });
    if (!isOk(answer)) return toolError(answer);
    const b = answer.body as Body;
    const results = b.results as Body[];
    const line = (r: Body) => {
      const marks = [r.is_short && 'Short', r.is_live && 'live', r.is_upcoming && 'upcoming'].filter(Boolean);
      const facts = [
        r.type !== 'video' && r.type,
        r.channel,
        typeof r.duration === 'number' &&
          `${Math.floor(r.duration / 60)}:${String(r.duration % 60).padStart(2, '0')}`,
        r.published,
        typeof r.view_count === 'number' && `${r.view_count.toLocaleString('en')} views`,
        ...marks,
      ].filter(Boolean);
      return `- [${String(r.title).replace(/[[\]]/g, '')}](${r.url})${facts.length > 0 ? ` (${facts.join(', ')})` : ''}`;
    };
    const lines = [
      ...(b.corrected_query ? [`Showing results for "${b.corrected_query}".`, ''] : []),
      ...(results.length > 0 ? results.map(line) : ['No results.']),
      ...(b.next_cursor ? ['', `[More results: call again with cursor "${b.next_cursor}".]`] : []),
    ];
    return ok(lines.join('\n'), b);
  },
};

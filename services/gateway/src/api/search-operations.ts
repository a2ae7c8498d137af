/**
 * GET /api/v1/search: its row of the operation table (operations.ts spreads it in) and the
 * result schemas, named so that generated clients get `SearchVideoResult`, `SearchChannelResult` and
 * `SearchPlaylistResult`, told apart by `type`.
 */
import {
  SEARCH_DURATIONS,
  SEARCH_FEATURES,
  SEARCH_QUERY_MAX,
  SEARCH_SORTS,
  SEARCH_TYPES,
  UPLOAD_DATES,
} from '@subx/youtube';
import { rateLimitSchema } from '@subx/public-api';
import { type OperationSpec } from '../domain/operation-spec.ts';
import { named } from '@subx/public-api';
import { operationCredits } from '@subx/credits';

/** A cursor holds the platform's token (up to about 1.5 KB) with what binds it to its search. */
const SEARCH_CURSOR_MAX = 4096;

const nullableString = { type: ['string', 'null'] };
const nullableInteger = { type: ['integer', 'null'] };

/** What every result carries, whatever its type (the list, in its order). */
const common = {
  title: { type: 'string' },
  channel: { ...nullableString, description: "The channel's name (a channel result: its own)." },
  channel_id: { ...nullableString, description: 'The channel id (UC…).' },
  duration: {
    ...nullableInteger,
    description: 'Seconds; null for live and upcoming streams, channels and playlists.',
  },
  published: {
    ...nullableString,
    description: 'As the platform words it: "2 hours ago", "Streamed 3 days ago", "Updated yesterday".',
  },
  view_count: {
    ...nullableInteger,
    description: 'null for a live stream (its viewers are not views), channels and playlists.',
  },
  url: { type: 'string' },
  thumbnail: { ...nullableString, description: 'The largest thumbnail the results page shows.' },
};
const COMMON_REQUIRED = [
  'type',
  'title',
  'channel',
  'channel_id',
  'duration',
  'published',
  'view_count',
  'url',
  'thumbnail',
];

const searchVideoResultSchema = named('SearchVideoResult', {
  type: 'object',
  required: [...COMMON_REQUIRED, 'video_id', 'is_short', 'is_live', 'is_upcoming'],
  additionalProperties: false,
  properties: {
    type: { type: 'string', const: 'video' },
    video_id: { type: 'string' },
    ...common,
    is_short: { type: 'boolean', description: 'A Short (its url is the /shorts/ one).' },
    is_live: { type: 'boolean', description: 'Live right now.' },
    is_upcoming: { type: 'boolean', description: 'A scheduled stream or premiere that has not started.' },
  },
});

const searchChannelResultSchema = named('SearchChannelResult', {
  type: 'object',
  required: [...COMMON_REQUIRED, 'handle', 'subscriber_count'],
  additionalProperties: false,
  properties: {
    type: { type: 'string', const: 'channel' },
    ...common,
    handle: { ...nullableString, description: "The channel's handle, without '@'." },
    subscriber_count: {
      ...nullableInteger,
      description: 'As the page counts them ("234K subscribers": 234000).',
    },
  },
});

const searchPlaylistResultSchema = named('SearchPlaylistResult', {
  type: 'object',
  required: [...COMMON_REQUIRED, 'playlist_id', 'video_count'],
  additionalProperties: false,
  properties: {
    type: { type: 'string', const: 'playlist' },
    playlist_id: { type: 'string' },
    ...common,
    video_count: nullableInteger,
  },
});

const searchResultSchema = named('SearchResult', {
  oneOf: [searchVideoResultSchema, searchChannelResultSchema, searchPlaylistResultSchema],
});

const listOf = (values: readonly string[]) => values.map((v) => `\`${v}\``).join(', ');

export const SEARCH_OPERATIONS: OperationSpec[] = [
  {
    method: 'GET',
    path: '/api/v1/search',
    operationId: 'search',
    summary: 'Search videos, channels and playlists',
    description:
      "One page of the platform's search results (about 20), in its order, with `next_cursor` for the next page. Shorts and live streams are marked; a query the platform corrects answers `corrected_query` and the results it gave. Results are cached for 5 minutes (`cached`). Counts as one request; priced in the pricing table (`search`, default 0 credits, like a metadata read; 0 when served from the cache).",
    auth: 'search',
    scope: 'transcripts:read',
    credits: operationCredits().search,
    tag: 'Search',
    querystring: {
      type: 'object',
      additionalProperties: false,
      properties: {
        query: {
          type: 'string',
          minLength: 1,
          maxLength: SEARCH_QUERY_MAX,
          description: `What to search for, 1 to ${SEARCH_QUERY_MAX} characters (not only spaces); required, as \`query\` or its alias \`q\`. The name a job's or a watch's search source gives it too.`,
        },
        q: {
          type: 'string',
          minLength: 1,
          maxLength: SEARCH_QUERY_MAX,
          description: 'Alias of `query` (the name a search box sends); give one of the two.',
        },
        type: {
          type: 'string',
          enum: [...SEARCH_TYPES],
          default: 'video',
          description:
            'What to find: videos, channels, playlists, or all of them as the platform mixes them.',
        },
        cursor: {
          type: 'string',
          minLength: 1,
          maxLength: SEARCH_CURSOR_MAX,
          description:
            'The `next_cursor` of the previous page; send the same `q`, `type` and filters with it (another search is 400 INVALID_REQUEST naming `cursor`).',
        },
        upload_date: {
          type: 'string',
          enum: [...UPLOAD_DATES],
          description: 'Uploaded within the last hour, today, this week, month or year.',
        },
        duration: {
          type: 'string',
          enum: [...SEARCH_DURATIONS],
          description: 'short: under 4 minutes; medium: 4 to 20; long: over 20.',
        },
        sort: {
          type: 'string',
          enum: [...SEARCH_SORTS],
          default: 'relevance',
          description: 'Order of the results.',
        },
        features: {
          type: 'string',
          maxLength: 200,
          description: `Comma-separated features every result must have: ${listOf(SEARCH_FEATURES)} (\`subtitles\`: videos with subtitles or closed captions).`,
        },
      },
    },
    response: named('SearchPage', {
      type: 'object',
      required: ['query', 'results', 'next_cursor', 'cached', 'credits_used', 'rate_limit', 'request_id'],
      additionalProperties: false,
      properties: {
        query: { type: 'string', description: 'The query as searched (`query` without outer spaces).' },
        corrected_query: {
          type: 'string',
          description:
            'Only when the platform corrected the query ("Showing results for", "Including results for") or suggests a correction ("Did you mean"); the results are what it answered.',
        },
        results: { type: 'array', items: searchResultSchema, description: "In the platform's order." },
        next_cursor: {
          type: ['string', 'null'],
          description: 'The next page: pass it as `cursor`; null at the end.',
        },
        cached: { type: 'boolean' },
        credits_used: { type: 'integer' },
        rate_limit: rateLimitSchema,
        request_id: { type: 'string' },
      },
    }),
    errors: [
      'UNAUTHORIZED',
      'RATE_LIMITED',
      'INVALID_REQUEST',
      'INSUFFICIENT_CREDITS',
      'UPSTREAM_ERROR',
      'UPSTREAM_BLOCKED',
      'UPSTREAM_TIMEOUT',
    ],
  },
];

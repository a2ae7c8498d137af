/**
 * The MCP tools, each the twin of one operation of the HTTP API. Names are this module's; each
 * tool's description and input schema are built from its operation in openapi/operations.ts (the
 * table routes and /openapi.json are built from), so they cannot drift. Every call goes through
 * the real route (`RouteCaller`), so admission, limits, credits, usage and idempotency are the
 * route's own; the tool only shapes the answer for a model (render.ts).
 */
import { Ajv } from 'ajv';
import { Errors, plural } from '@subx/errors';
import type { AppError } from '@subx/errors';
import { metadataSchema, rateLimitSchema, segmentSchema } from '@subx/public-api';
import { METADATA_FIELDS } from '@subx/youtube';
import { extractResponse } from '../api/extract-response.ts';
import { isMetered } from '../domain/operation-spec.ts';
import { operationById } from '../openapi/operations.ts';
import type { OperationSpec } from '../domain/operation-spec.ts';
import type { JsonSchema } from '@subx/public-api';
import { PAGE_CHARS, pageOf, readCursor, transcriptPage } from './render.ts';
import type { Chapter, Segment, TranscriptFormat } from './render.ts';

import { getAccountTool } from './account-tool.ts';
import { createJobTool, estimateJobTool, getJobResultsTool, getJobTool } from './job-tools.ts';
import { searchVideosTool } from './search-tool.ts';
import {
  CURSOR,
  IDEMPOTENCY_KEY,
  PAGING,
  appErrorResult,
  isOk,
  keyOf,
  ok,
  requestFields,
  str,
  toolError,
} from './tool-kit.ts';
import type { Body, RouteCaller, ToolDefinition, ToolResult } from './tool-kit.ts';

const transcriptOutput = {
  type: 'object',
  required: ['video_id', 'title', 'channel', 'language', 'subtitle_type', 'format', 'segments', 'page'],
  properties: {
    video_id: str,
    title: str,
    channel: str,
    duration: { type: 'number' },
    language: str,
    subtitle_type: str,
    translated_from: str,
    translated_by: { type: 'string', enum: ['platform', 'model'] },
    language_confidence: { type: 'string', enum: ['low'] },
    format: str,
    cached: { type: 'boolean' },
    chapters: metadataSchema.properties.chapters,
    segments: { type: 'array', items: segmentSchema, description: 'The segments of this page.' },
    source: extractResponse.properties.source,
    chunks: {
      ...extractResponse.properties.chunks,
      description: 'With `chunking`: every chunk, on each page.',
    },
    page: PAGING,
    rate_limit: rateLimitSchema,
    request_id: str,
  },
};

const TOOLS: ToolDefinition[] = [
  {
    name: 'get_transcript',
    spends: true,
    operationId: 'extract',
    title: 'Get a video transcript',
    lead: `Transcript of one video, as markdown by default (title, channel, chapters as headings, repeated lines dropped), or txt/srt/vtt/json; long transcripts come in pages of about ${PAGE_CHARS.toLocaleString('en')} characters (see cursor).`,
    fields: [
      'url',
      'language',
      'format',
      'include_timestamps',
      'include',
      'translate',
      'force_refresh',
      'chunking',
      'mode',
    ],
    defaults: { format: 'md' },
    paged: true,
    outputSchema: transcriptOutput,
    async run(args, call, spec) {
      const format = args.format as TranscriptFormat;
      const include = [...(args.include as string[])];
      // Chapters become the markdown headings (extract is free: asking for them costs nothing).
      if (format === 'md' && !include.includes('chapters')) include.push('chapters');
      const answer = await call({
        spec,
        body: { ...requestFields(args), include, format: 'json', include_timestamps: true },
      });
      if (!isOk(answer)) return toolError(answer);
      const b = answer.body as Body;
      const chapters = (b.metadata.chapters ?? []) as Chapter[];
      const page = transcriptPage({
        title: b.metadata.title,
        channel: b.metadata.channel,
        duration: b.metadata.duration,
        language: b.language,
        subtitleType: b.subtitle_type,
        chapters,
        segments: b.subtitles as Segment[],
        format,
        includeTimestamps: args.include_timestamps as boolean,
        cursor: args.cursor,
      });
      return ok(page.text, {
        video_id: b.video_id,
        title: b.metadata.title,
        channel: b.metadata.channel,
        duration: b.metadata.duration,
        language: b.language,
        subtitle_type: b.subtitle_type,
        ...(b.translated_from ? { translated_from: b.translated_from } : {}),
        ...(b.translated_by ? { translated_by: b.translated_by } : {}),
        ...(b.language_confidence ? { language_confidence: b.language_confidence } : {}),
        format,
        cached: b.cached,
        chapters,
        segments: page.segments,
        ...(b.source ? { source: b.source } : {}),
        ...(b.chunks ? { chunks: b.chunks } : {}),
        page: page.paging,
        rate_limit: b.rate_limit,
        request_id: b.request_id,
      });
    },
  },
  {
    name: 'check_subtitles',
    spends: false,
    operationId: 'validate',
    title: 'Check subtitle availability',
    lead: 'Whether a video has subtitles and in which languages, before asking for a transcript.',
    fields: ['url'],
    outputSchema: operationById('validate').response,
    async run(args, call, spec) {
      const answer = await call({ spec, query: requestFields(args) });
      if (!isOk(answer)) return toolError(answer);
      const b = answer.body as Body;
      const langs = (list: string[]) => (list.length ? list.join(', ') : 'none');
      // A private or missing video has no title to quote.
      const video = b.video_title ? `"${b.video_title}"` : 'The video';
      const text = b.has_subtitles
        ? `${video} has subtitles. Manual: ${langs(b.available_languages.manual)}. Auto-generated: ${langs(b.available_languages.auto_generated)}.`
        : // validate's reason says why (private, not found, no subtitles...): the agent's next step
          // depends on it.
          `${video} has ${b.valid ? 'no subtitles' : 'nothing to extract'}${!b.valid && b.reason ? `: ${b.reason.message} (${b.reason.code})` : ''}.`;
      return ok(text, b);
    },
  },
  {
    name: 'get_video_metadata',
    spends: false,
    operationId: 'extract',
    title: 'Get video metadata',
    lead: `Every metadata field of a video (${METADATA_FIELDS.join(', ')}, besides title, channel, duration, upload date and thumbnail), without the transcript. Read from the video's captions track: a video without captions answers NO_SUBTITLES (check_subtitles still tells its title and duration).`,
    fields: ['url', 'language'],
    outputSchema: {
      type: 'object',
      required: ['video_id', 'metadata'],
      properties: {
        video_id: str,
        metadata: metadataSchema,
        language: str,
        subtitle_type: str,
        segment_count: { type: 'integer' },
        rate_limit: rateLimitSchema,
        request_id: str,
      },
    },
    async run(args, call, spec) {
      const answer = await call({
        spec,
        body: { ...requestFields(args), include: [...METADATA_FIELDS], include_timestamps: false },
      });
      if (!isOk(answer)) return toolError(answer);
      const b = answer.body as Body;
      const m = b.metadata as Body;
      const lines = [`# ${m.title}`, ''];
      for (const [name, value] of Object.entries(m)) {
        if (name === 'title') continue;
        const shown = Array.isArray(value)
          ? value
              .map((v) => (typeof v === 'object' ? `${v.title} (${v.start_time} s)` : String(v)))
              .join('; ')
          : String(value ?? 'unknown');
        lines.push(`- **${name}:** ${shown.length > 2_000 ? `${shown.slice(0, 2_000)}…` : shown}`);
      }
      return ok(lines.join('\n'), {
        video_id: b.video_id,
        metadata: m,
        language: b.language,
        subtitle_type: b.subtitle_type,
        segment_count: b.segment_count,
        rate_limit: b.rate_limit,
        request_id: b.request_id,
      });
    },
  },
  {
    name: 'get_playlist_transcripts',
    spends: true,
    operationId: 'playlist',
    title: 'Get the transcripts of a playlist',
    lead: `Plain-text transcripts of the first max (at most 25) videos of a playlist. The text shows each video's transcript cut to an equal share of about ${PAGE_CHARS.toLocaleString('en')} characters; get_transcript (free of credits) gives any one of them whole.`,
    fields: ['url', 'max', 'language', 'translate', 'mode'],
    outputSchema: {
      type: 'object',
      required: ['playlist', 'extracted_count', 'videos', 'credits_charged'],
      properties: {
        playlist: (operationById('playlist').response.properties as Body).playlist,
        extracted_count: { type: 'integer' },
        credits_charged: { type: 'integer' },
        videos: {
          type: 'array',
          items: {
            type: 'object',
            required: ['success', 'url'],
            properties: {
              success: { type: 'boolean' },
              video_id: { type: ['string', 'null'] },
              url: str,
              title: str,
              language: str,
              characters: { type: 'integer', description: 'Length of the whole transcript.' },
              shown_characters: { type: 'integer', description: 'How much of it the text shows.' },
              error_code: str,
              error_message: str,
            },
          },
        },
        rate_limit: rateLimitSchema,
      },
    },
    async run(args, call, spec) {
      const answer = await call({
        spec,
        query: { ...requestFields(args), format: 'json', include_timestamps: false },
        ...keyOf(args),
      });
      if (!isOk(answer)) return toolError(answer);
      const b = answer.body as Body;
      const items = b.results as Body[];
      const share = Math.floor(PAGE_CHARS / Math.max(1, items.length));
      const lines = [
        `# ${b.playlist.title} (${b.playlist.uploader})`,
        `${b.extracted_count} of ${plural(b.playlist.total_videos, 'video')} processed; ${plural(b.credits_charged, 'credit')} charged.`,
      ];
      const videos = items.map((item) => {
        if (!item.success) {
          lines.push('', `## ${item.url}`, `Failed: ${item.error_code}: ${item.error_message}`);
          return {
            success: false,
            video_id: item.video_id,
            url: item.url,
            error_code: item.error_code,
            error_message: item.error_message,
          };
        }
        const text = String(item.text ?? '');
        const shown =
          text.length > share ? `${text.slice(0, share)}… [cut: get_transcript for all of it]` : text;
        lines.push('', `## ${item.metadata?.title ?? item.video_id}`, item.url, '', shown);
        return {
          success: true,
          video_id: item.video_id,
          url: item.url,
          title: item.metadata?.title ?? '',
          language: item.language,
          characters: text.length,
          shown_characters: Math.min(text.length, share),
        };
      });
      return ok(lines.join('\n'), {
        playlist: b.playlist,
        extracted_count: b.extracted_count,
        credits_charged: b.credits_charged,
        videos,
        rate_limit: b.rate_limit,
      });
    },
  },
  {
    name: 'get_comments',
    spends: true,
    operationId: 'comments',
    title: 'Get video comments',
    lead: `Comments of a video as a markdown list, in pages of about ${PAGE_CHARS.toLocaleString('en')} characters (see cursor; a later page is served from the comments cache for 0 credits).`,
    fields: ['url', 'max', 'sort'],
    paged: true,
    outputSchema: {
      type: 'object',
      required: ['video_id', 'comments', 'page', 'credits_used'],
      properties: {
        video_id: str,
        comments: (operationById('comments').response.properties as Body).comments,
        comments_disabled: { type: 'boolean' },
        cached: { type: 'boolean' },
        credits_used: { type: 'integer' },
        page: PAGING,
        request_id: str,
      },
    },
    async run(args, call, spec) {
      const answer = await call({ spec, query: requestFields(args), ...keyOf(args) });
      if (!isOk(answer)) return toolError(answer);
      const b = answer.body as Body;
      const all = b.comments as Body[];
      const first = readCursor(args.cursor, all.length);
      const page = pageOf(all, first, (c) => String(c.text).length + String(c.author).length + 30);
      const lines = b.comments_disabled
        ? ['Comments are turned off for this video.']
        : page.items.map(
            (c) =>
              `- ${c.is_reply ? '↳ ' : ''}**${c.author}** (${c.likes} likes): ${String(c.text).replace(/\s+/g, ' ')}`,
          );
      if (page.nextCursor !== null) {
        lines.push(
          '',
          `[Comments ${first + 1}–${page.end} of ${all.length}: call again with cursor "${page.nextCursor}" for more.]`,
        );
      }
      return ok(lines.join('\n'), {
        video_id: b.video_id,
        comments: page.items,
        comments_disabled: b.comments_disabled,
        cached: b.cached,
        credits_used: b.credits_used,
        page: {
          cursor: String(first),
          next_cursor: page.nextCursor,
          first_comment: first,
          comment_count: page.items.length,
          total_comments: all.length,
        },
        request_id: b.request_id,
      });
    },
  },
  searchVideosTool,
  {
    name: 'summarize_video',
    spends: true,
    operationId: 'summarize',
    title: 'Summarize a video',
    lead: 'An AI summary of a video, with topic timestamps.',
    fields: ['url', 'video_url', 'style', 'language'],
    outputSchema: operationById('summarize').response,
    async run(args, call, spec) {
      const answer = await call({ spec, body: requestFields(args), ...keyOf(args) });
      if (!isOk(answer)) return toolError(answer);
      const b = answer.body as Body;
      const lines = [`# Summary of "${b.video_metadata.title}" (${b.video_metadata.channel})`, '', b.summary];
      if (b.timestamps.length) {
        lines.push('', '## Topics');
        for (const t of b.timestamps as Body[]) lines.push(`- [${t.seconds} s] ${t.topic}: ${t.text}`);
      }
      lines.push(
        '',
        `${plural(b.credits_used, 'credit')} used${b.cached ? ' (cached)' : ''}; model ${b.model}.`,
      );
      return ok(lines.join('\n'), b);
    },
  },
  {
    name: 'analyze_comments',
    spends: true,
    operationId: 'analyzeComments',
    title: 'Analyze video comments',
    lead: 'AI sentiment, themes and key quotes of a sample of a video’s comments.',
    fields: ['url', 'video_url', 'sample_size', 'language'],
    outputSchema: operationById('analyzeComments').response,
    async run(args, call, spec) {
      const answer = await call({ spec, body: requestFields(args), ...keyOf(args) });
      if (!isOk(answer)) return toolError(answer);
      const b = answer.body as Body;
      const lines = [
        `Sentiment: **${b.sentiment}** (${b.sample_size} of ${plural(b.total_comments, 'comment')} read).`,
        '',
        '## Themes',
        ...(b.themes as string[]).map((t) => `- ${t}`),
        '',
        '## Key quotes',
        ...(b.key_quotes as Body[]).map((q) => `> ${q.text} (${q.author})`),
        '',
        `${plural(b.credits_used, 'credit')} used${b.cached ? ' (cached)' : ''}; model ${b.model}.`,
      ];
      return ok(lines.join('\n'), b);
    },
  },
  getAccountTool,
  estimateJobTool,
  createJobTool,
  getJobTool,
  getJobResultsTool,
];

/** Tier, credits and counting of the twin, in the words of the operation table. */
function description(tool: ToolDefinition, spec: OperationSpec): string {
  const access =
    spec.auth === 'account'
      ? `Not counted against the daily limit. Credits: ${spec.credits}.`
      : spec.auth
        ? `Counts as one ${spec.method} ${spec.path} request against the key's daily limit${spec.tier ? '; needs the Pro tier or higher' : ''}. Credits: ${spec.credits}.`
        : `Credits: ${spec.credits}; no daily count, limited per client IP like ${spec.method} ${spec.path}.`;
  return `${tool.lead}\n\n${spec.summary}. ${spec.description}\n\n${access}`;
}

type ObjectSchema = { properties: Record<string, JsonSchema>; required?: string[] };

/** The operation's request fields, path, query and body together (a tool takes them flat). */
export function requestSchemaOf(spec: OperationSpec): Required<ObjectSchema> {
  const parts = [spec.params, spec.querystring, spec.body].filter(Boolean) as ObjectSchema[];
  return {
    properties: Object.assign({}, ...parts.map((p) => p.properties)) as Record<string, JsonSchema>,
    required: parts.flatMap((p) => p.required ?? []),
  };
}

function inputSchemaOf(tool: ToolDefinition, spec: OperationSpec): JsonSchema {
  const source = requestSchemaOf(spec);
  const properties: Record<string, JsonSchema> = {};
  for (const field of tool.fields) {
    const schema = source.properties[field];
    if (!schema) throw new Error(`${tool.name}: ${spec.operationId} has no field ${field}`);
    properties[field] =
      tool.defaults?.[field] === undefined ? schema : { ...schema, default: tool.defaults[field] };
  }
  // The query's include is a comma-separated string; tools take the body's array everywhere.
  if (tool.paged) properties.cursor = CURSOR;
  if (isMetered(spec) && spec.credits !== 'none') properties.idempotency_key = IDEMPOTENCY_KEY;
  return {
    type: 'object',
    additionalProperties: false,
    required: (source.required ?? []).filter((f) => tool.fields.includes(f)),
    properties,
  };
}

/** MCP tool annotations (protocol revision 2025-11-25): hints a host uses to decide what to run unasked. */
interface ToolAnnotations {
  title: string;
  /** Changes nothing: neither the platform nor the account (no credits). */
  readOnlyHint: boolean;
  /** Nothing is deleted or overwritten. */
  destructiveHint: boolean;
  /** The same arguments again do nothing more (a repeat is served from the cache, and not charged again). */
  idempotentHint: boolean;
  /** Reads the open web (the video platform), not only this service's own records. */
  openWorldHint: boolean;
}

export interface McpTool {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema: JsonSchema;
  annotations: ToolAnnotations;
  call(args: unknown, caller: RouteCaller): Promise<ToolResult>;
}

const ajv = new Ajv({ useDefaults: true, strict: false, allErrors: false });

export function buildTools(): McpTool[] {
  return TOOLS.map((tool) => {
    const spec = operationById(tool.operationId);
    const inputSchema = inputSchemaOf(tool, spec);
    const validate = ajv.compile(inputSchema);
    return {
      name: tool.name,
      title: tool.title,
      description: description(tool, spec),
      inputSchema,
      outputSchema: tool.outputSchema,
      annotations: {
        title: tool.title,
        readOnlyHint: !tool.spends,
        destructiveHint: false,
        idempotentHint: tool.idempotent ?? true,
        openWorldHint: tool.openWorld ?? true,
      },
      async call(args, caller) {
        const input = structuredClone(args ?? {}) as Record<string, unknown>;
        if (!validate(input)) {
          const e = validate.errors?.[0];
          const where = `arguments${e?.instancePath.replaceAll('/', '.') ?? ''}`;
          const what =
            e?.keyword === 'additionalProperties'
              ? `has an unknown field '${String(e.params.additionalProperty)}'`
              : (e?.message ?? 'is invalid');
          return appErrorResult(Errors.invalidRequest(`${where} ${what}`));
        }
        try {
          return await tool.run(input, caller, spec);
        } catch (error) {
          if (error instanceof Error && 'code' in error && 'status' in error) {
            return appErrorResult(error as AppError);
          }
          throw error;
        }
      },
    };
  });
}

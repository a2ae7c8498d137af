/**
 * Structured-output schemas: the JSON Schema sent as `response_format` (strict mode: every property
 * required, no additional properties) and the zod schema the reply is validated against. Limits on
 * counts are enforced after validation by trimming, so a model that returns six themes is not
 * failed for it.
 */
import { z } from 'zod';
import { SENTIMENTS } from '../domain/types.ts';

export interface StructuredSchema<T> {
  readonly name: string;
  readonly jsonSchema: Record<string, unknown>;
  readonly parse: z.ZodType<T>;
}

const timestampJson = {
  type: 'object',
  additionalProperties: false,
  required: ['seconds', 'topic', 'text'],
  properties: { seconds: { type: 'number' }, topic: { type: 'string' }, text: { type: 'string' } },
};
const timestampZ = z.object({ seconds: z.number().finite(), topic: z.string(), text: z.string() });

export type ProseSummary = z.infer<typeof proseZ>;
const proseZ = z.object({ summary: z.string().trim().min(1), timestamps: z.array(timestampZ) });
export const proseSummarySchema: StructuredSchema<ProseSummary> = {
  name: 'video_summary',
  jsonSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['summary', 'timestamps'],
    properties: { summary: { type: 'string' }, timestamps: { type: 'array', items: timestampJson } },
  },
  parse: proseZ,
};

export type PointsSummary = z.infer<typeof pointsZ>;
const pointsZ = z.object({
  points: z.array(z.string().trim().min(1)).min(1),
  timestamps: z.array(timestampZ),
});
export const pointsSummarySchema: StructuredSchema<PointsSummary> = {
  name: 'video_key_points',
  jsonSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['points', 'timestamps'],
    properties: {
      points: { type: 'array', items: { type: 'string' } },
      timestamps: { type: 'array', items: timestampJson },
    },
  },
  parse: pointsZ,
};

export type Notes = z.infer<typeof notesZ>;
const notesZ = z.object({
  notes: z.array(
    z.object({ seconds: z.number().finite(), topic: z.string(), point: z.string().trim().min(1) }),
  ),
});
export const notesSchema: StructuredSchema<Notes> = {
  name: 'transcript_notes',
  jsonSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['notes'],
    properties: {
      notes: {
        type: 'array',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['seconds', 'topic', 'point'],
          properties: { seconds: { type: 'number' }, topic: { type: 'string' }, point: { type: 'string' } },
        },
      },
    },
  },
  parse: notesZ,
};

export type CommentAnalysis = z.infer<typeof analysisZ>;
const analysisZ = z.object({
  sentiment: z.enum(SENTIMENTS),
  themes: z.array(z.string()),
  key_quotes: z.array(z.object({ text: z.string(), author: z.string() })),
});
export const analysisSchema: StructuredSchema<CommentAnalysis> = {
  name: 'comment_analysis',
  jsonSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['sentiment', 'themes', 'key_quotes'],
    properties: {
      sentiment: { type: 'string', enum: [...SENTIMENTS] },
      themes: { type: 'array', items: { type: 'string' } },
      key_quotes: {
        type: 'array',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['text', 'author'],
          properties: { text: { type: 'string' }, author: { type: 'string' } },
        },
      },
    },
  },
  parse: analysisZ,
};

/** The json answer of POST /api/v1/extract (the extract row of the operation table). */
import {
  chunkSchema,
  metadataSchema,
  rateLimitSchema,
  segmentSchema,
  subtitleTypeSchema,
  transcriptProvenanceProperties,
} from '@subx/public-api';

export const extractResponse = {
  type: 'object',
  required: [
    'video_id',
    'metadata',
    'language',
    'subtitle_type',
    'cached',
    'extracted_at',
    'credits_used',
    'rate_limit',
    'request_id',
  ],
  additionalProperties: false,
  properties: {
    video_id: { type: 'string' },
    metadata: metadataSchema,
    language: { type: 'string' },
    subtitle_type: subtitleTypeSchema,
    subtitles: { type: 'array', items: segmentSchema, description: 'Timed mode (include_timestamps true).' },
    text: { type: 'string', description: 'Plain-text mode: all segment text, joined by spaces.' },
    segment_count: { type: 'integer', description: 'Plain-text mode: segments combined.' },
    cached: { type: 'boolean' },
    extracted_at: { type: 'string', format: 'date-time' },
    ...transcriptProvenanceProperties,
    chunks: { type: 'array', items: chunkSchema, description: 'With `chunking` (or `embed`), in order.' },
    embedding_model: { type: 'string', description: 'With `embed: true`: the model of the embeddings.' },
    credits_used: {
      type: 'integer',
      description:
        'What this request was charged: 0 for captions (extract itself is free), more for a transcription, a translation by a model or embeddings.',
    },
    rate_limit: rateLimitSchema,
    request_id: { type: 'string' },
  },
};

/** The json answer of POST /api/v1/extract (the extract row of the operation table). */
import {
  chunkSchema,
  metadataSchema,
  rateLimitSchema,
  segmentSchema,
  subtitleTypeSchema,
} from '../domain/common-schemas.ts';

export const extractResponse = {
  type: 'object',
  required: [
    'video_id',
    'metadata',
    'language',
    'subtitle_type',
    'cached',
    'extracted_at',
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
    translated_from: { type: 'string' },
    language_confidence: {
      type: 'string',
      enum: ['low'],
      description:
        "Present when the track is auto-generated and the video's stated audio language or its manual tracks say another language.",
    },
    translated_by: {
      type: 'string',
      enum: ['platform', 'model'],
      description:
        'Set with `translated_from`: who translated, the platform or a model (when the platform refuses).',
    },
    source: {
      type: 'string',
      enum: ['captions', 'audio'],
      description:
        '`audio`: transcribed from the audio by a speech-to-text model (`mode`); `captions` otherwise.',
    },
    chunks: { type: 'array', items: chunkSchema, description: 'With `chunking` (or `embed`), in order.' },
    embedding_model: { type: 'string', description: 'With `embed: true`: the model of the embeddings.' },
    rate_limit: rateLimitSchema,
    request_id: { type: 'string' },
  },
};

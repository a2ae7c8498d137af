/**
 * The pieces a job's source and a watch's source are made of (job-schemas.ts, watch-schemas.ts):
 * one definition of a playlist URL, a channel tab, a search query and the search filters, so the
 * two sources accept the same values and can never disagree.
 */
import {
  SEARCH_DURATIONS,
  SEARCH_FEATURES,
  SEARCH_QUERY_MAX,
  SEARCH_SORTS,
  UPLOAD_DATES,
} from '@subx/youtube';
import { urlSchema } from './common-schemas.ts';
import { CHANNEL_TABS } from './job-vocabulary.ts';

export { SEARCH_QUERY_MAX };

export const playlistUrlSchema = urlSchema(
  'Playlist URL (`/playlist?list=ID`, or a watch URL carrying `list=ID`).',
);

export const channelTabSchema = (description: string) => ({
  type: 'string',
  enum: [...CHANNEL_TABS],
  description,
});

/** A search's query, as GET /api/v1/search's `q`; described where a source says more about it. */
export const searchQuerySchema = (description?: string) => ({
  type: 'string',
  minLength: 1,
  maxLength: SEARCH_QUERY_MAX,
  ...(description ? { description } : {}),
});

export const searchFilterSchemas = {
  upload_date: { type: 'string', enum: [...UPLOAD_DATES] },
  duration: { type: 'string', enum: [...SEARCH_DURATIONS] },
  sort: { type: 'string', enum: [...SEARCH_SORTS] },
  features: {
    type: 'array',
    maxItems: SEARCH_FEATURES.length,
    items: { type: 'string', enum: [...SEARCH_FEATURES] },
  },
};

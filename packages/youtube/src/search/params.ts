import { field, varint } from '../tokens.ts';

/**
 * The `params` of an InnerTube `search` request: a base64 protobuf the web client builds from the
 * filter menu (yt-dlp, NewPipeExtractor and YouTube.js send the same values):
 *
 *     { 1: sort (varint), 2: { 1: upload date, 2: type, 3: duration, <feature>: 1, ... }, 30: 1 }
 *
 * Field 30 = 1 is what the web client adds to every search since 2021 (the recorded requests of
 * fixtures-recorded/newpipe/43f8e6e/search carry it: `8AEB` alone for all results, `EgIQAfABAQ%3D%3D`
 * for videos); sort 0 (relevance) and "any" filters are left out, as the web client does.
 */

export const SEARCH_TYPES = ['video', 'channel', 'playlist', 'all'] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];

export const UPLOAD_DATES = ['hour', 'today', 'week', 'month', 'year'] as const;
export type UploadDate = (typeof UPLOAD_DATES)[number];

export const SEARCH_DURATIONS = ['short', 'medium', 'long'] as const;
export type SearchDuration = (typeof SEARCH_DURATIONS)[number];

export const SEARCH_SORTS = ['relevance', 'date', 'views'] as const;
export type SearchSort = (typeof SEARCH_SORTS)[number];

/** The filter menu's features, by the field number the web client sets to 1 inside the filters. */
const FEATURE_FIELDS = {
  hd: 4,
  subtitles: 5,
  creative_commons: 6,
  '3d': 7,
  live: 8,
  purchased: 9,
  '4k': 14,
  '360': 15,
  location: 23,
  hdr: 25,
  vr180: 26,
} as const;
export type SearchFeature = keyof typeof FEATURE_FIELDS;
export const SEARCH_FEATURES = Object.keys(FEATURE_FIELDS) as SearchFeature[];

export interface SearchFilters {
  type: SearchType;
  uploadDate?: UploadDate;
  duration?: SearchDuration;
  sort?: SearchSort;
  features?: readonly SearchFeature[];
}

const TYPE_VALUES: Record<SearchType, number> = { all: 0, video: 1, channel: 2, playlist: 3 };
const UPLOAD_DATE_VALUES: Record<UploadDate, number> = { hour: 1, today: 2, week: 3, month: 4, year: 5 };
/** The platform's numbering: 1 under 4 minutes, 2 over 20 minutes, 3 between (added later). */
const DURATION_VALUES: Record<SearchDuration, number> = { short: 1, long: 2, medium: 3 };
const SORT_VALUES: Record<SearchSort, number> = { relevance: 0, date: 2, views: 3 };

const varintField = (num: number, value: number) => [...varint(num * 8), ...varint(value)];

/**
 * The `params` value for these filters: URL-safe base64 with its padding percent-encoded, byte for byte
 * what the recorded requests sent (`EgIQA_ABAQ%3D%3D` for playlists; the platform reads either alphabet).
 */
export function searchParams(f: SearchFilters): string {
  const inner: number[] = [];
  if (f.uploadDate) inner.push(...varintField(1, UPLOAD_DATE_VALUES[f.uploadDate]));
  if (f.type !== 'all') inner.push(...varintField(2, TYPE_VALUES[f.type]));
  if (f.duration) inner.push(...varintField(3, DURATION_VALUES[f.duration]));
  const features = [...new Set(f.features ?? [])].map((name) => FEATURE_FIELDS[name]).sort((a, b) => a - b);
  for (const num of features) inner.push(...varintField(num, 1));
  const out: number[] = [];
  const sort = SORT_VALUES[f.sort ?? 'relevance'];
  if (sort !== 0) out.push(...varintField(1, sort));
  if (inner.length > 0) out.push(...field(2, Uint8Array.from(inner)));
  out.push(...varintField(30, 1));
  const b64 = Buffer.from(Uint8Array.from(out)).toString('base64');
  return b64.replaceAll('+', '-').replaceAll('/', '_').replaceAll('=', '%3D');
}

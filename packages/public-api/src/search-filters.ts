import type { extractorV1 } from '@subx/contracts';

/** A search source's filters as the extractor takes them (unset: not filtered; relevance: the default). */
export function searchFiltersOf(source: {
  upload_date?: string;
  duration?: string;
  sort?: string;
  features?: string[];
}): extractorV1.SearchFilters {
  return {
    uploadDate: source.upload_date ?? '',
    duration: source.duration ?? '',
    sort: source.sort === 'relevance' ? '' : (source.sort ?? ''),
    features: source.features ?? [],
  };
}

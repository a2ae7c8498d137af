export * from './common-schemas.ts';
export * from './item-chunks.ts';
export * from './job-vocabulary.ts';
export * from './mappers.ts';
export * from './schema-names.ts';
export * from './search-filters.ts';
export * from './transcript-modes.ts';
export * from './video-urls.ts';

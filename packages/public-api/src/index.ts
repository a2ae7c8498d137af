export * from './common-schemas.ts';
export * from './mappers.ts';
export * from './schema-names.ts';
export * from './transcript-modes.ts';
export * from './video-urls.ts';

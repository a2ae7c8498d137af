import { AppError } from '@subx/errors';
import { describe, expect, it } from 'vitest';
import { normalizedSearch } from './sources.ts';

describe('normalizedSearch (the search source of a job and of a watch)', () => {
  it('trims the query, leaves unset filters out and keeps each feature once, sorted', () => {
    const kept = normalizedSearch({
      query: '  cats  ',
      upload_date: 'week',
      sort: 'date',
      features: ['subtitles', 'hd', 'subtitles'],
    });
    expect(kept).toEqual({ query: 'cats', upload_date: 'week', sort: 'date', features: ['hd', 'subtitles'] });
    // stored documents keep one key order: the query, then the filters
    expect(Object.keys(kept)).toEqual(['query', 'upload_date', 'sort', 'features']);
    expect(normalizedSearch({ query: 'dogs', features: [] })).toEqual({ query: 'dogs' });
  });

  it('refuses a query of only spaces as INVALID_REQUEST naming source.query', () => {
    let thrown: unknown;
    try {
      normalizedSearch({ query: ' \t ' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect(thrown).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'source.query' } });
  });
});

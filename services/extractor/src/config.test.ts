import { describe, expect, it } from 'vitest';
import { CONSUMER_GROUPS, TOPICS } from '@subx/contracts';
import { loadExtractorConfig, workersGroupOf } from './config.ts';

describe('extractor config', () => {
  it('refuses a bad value with one line naming the variable and what it expected', () => {
    expect(() => loadExtractorConfig({ EXTRACT_WORKER_MEMBERS: '100' })).toThrow(
      /^Invalid configuration: EXTRACT_WORKER_MEMBERS: must be an integer between 1 and 64$/,
    );
    // Before: z.coerce read "" as 0 and "1e1" as 10.
    expect(() => loadExtractorConfig({ EXTRACT_WORKER_CONCURRENCY: '1e1' })).toThrow(
      /EXTRACT_WORKER_CONCURRENCY: must be an integer between 1 and 256/,
    );
    expect(() => loadExtractorConfig({ EXTRACT_WORKERS_ENABLED: 'yes' })).toThrow(
      /EXTRACT_WORKERS_ENABLED: must be one of true, false, 1, 0/,
    );
  });

  it('reads the workers group from EXTRACT_WORKERS_GROUP, as the gateway does (KAFKA_GROUP_ID still works)', () => {
    expect(workersGroupOf(loadExtractorConfig({}))).toBe(CONSUMER_GROUPS.extractWorkers.default);
    expect(workersGroupOf(loadExtractorConfig({ [CONSUMER_GROUPS.extractWorkers.env]: 'w1' }))).toBe('w1');
    expect(workersGroupOf(loadExtractorConfig({ KAFKA_GROUP_ID: 'w2' }))).toBe('w2');
    expect(() => loadExtractorConfig({ EXTRACT_WORKERS_GROUP: 'w1', KAFKA_GROUP_ID: 'w2' })).toThrow(
      /KAFKA_GROUP_ID: must equal EXTRACT_WORKERS_GROUP/,
    );
    expect(loadExtractorConfig({})).toMatchObject({
      EXTRACT_JOBS_TOPIC: TOPICS.extractJobs.default,
      EXTRACT_RESULTS_TOPIC: TOPICS.extractResults.default,
    });
  });
});

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

  it('reads the bulk workers: their own topic, group, members and concurrency, with lower defaults', () => {
    expect(loadExtractorConfig({})).toMatchObject({
      EXTRACT_BULK_JOBS_TOPIC: TOPICS.extractBulkJobs.default,
      EXTRACT_BULK_WORKERS_GROUP: CONSUMER_GROUPS.extractBulkWorkers.default,
      EXTRACT_BULK_WORKER_MEMBERS: 1,
      EXTRACT_BULK_WORKER_CONCURRENCY: 8,
    });
    expect(
      loadExtractorConfig({
        [TOPICS.extractBulkJobs.env]: 'bulk.t1',
        [CONSUMER_GROUPS.extractBulkWorkers.env]: 'bulk-g1',
        EXTRACT_BULK_WORKER_MEMBERS: '2',
        EXTRACT_BULK_WORKER_CONCURRENCY: '3',
      }),
    ).toMatchObject({
      EXTRACT_BULK_JOBS_TOPIC: 'bulk.t1',
      EXTRACT_BULK_WORKERS_GROUP: 'bulk-g1',
      EXTRACT_BULK_WORKER_MEMBERS: 2,
      EXTRACT_BULK_WORKER_CONCURRENCY: 3,
    });
    expect(() => loadExtractorConfig({ EXTRACT_BULK_WORKER_CONCURRENCY: '0' })).toThrow(
      /^Invalid configuration: EXTRACT_BULK_WORKER_CONCURRENCY: must be an integer between 1 and 256$/,
    );
    expect(() => loadExtractorConfig({ EXTRACT_BULK_WORKER_MEMBERS: '65' })).toThrow(
      /EXTRACT_BULK_WORKER_MEMBERS: must be an integer between 1 and 64/,
    );
    expect(() => loadExtractorConfig({ EXTRACT_BULK_WORKERS_GROUP: ' ' })).toThrow(
      /EXTRACT_BULK_WORKERS_GROUP: must not be blank/,
    );
  });

  it("refuses bulk workers sharing the batch workers' topic or group (jobs answered twice, lag mixed)", () => {
    expect(() => loadExtractorConfig({ EXTRACT_BULK_JOBS_TOPIC: TOPICS.extractJobs.default })).toThrow(
      /EXTRACT_BULK_JOBS_TOPIC: must differ from EXTRACT_JOBS_TOPIC and EXTRACT_RESULTS_TOPIC/,
    );
    expect(() =>
      loadExtractorConfig({ EXTRACT_JOBS_TOPIC: 'jobs.t1', EXTRACT_BULK_JOBS_TOPIC: 'jobs.t1' }),
    ).toThrow(/EXTRACT_BULK_JOBS_TOPIC: must differ/);
    expect(() => loadExtractorConfig({ EXTRACT_BULK_JOBS_TOPIC: TOPICS.extractResults.default })).toThrow(
      /EXTRACT_BULK_JOBS_TOPIC: must differ/,
    );
    expect(() =>
      loadExtractorConfig({ EXTRACT_BULK_WORKERS_GROUP: CONSUMER_GROUPS.extractWorkers.default }),
    ).toThrow(/EXTRACT_BULK_WORKERS_GROUP: must differ from the batch workers' group/);
    // The batch group under its older name counts too.
    expect(() => loadExtractorConfig({ KAFKA_GROUP_ID: 'g1', EXTRACT_BULK_WORKERS_GROUP: 'g1' })).toThrow(
      /EXTRACT_BULK_WORKERS_GROUP: must differ/,
    );
  });
});

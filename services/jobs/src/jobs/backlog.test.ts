import { describe, expect, it } from 'vitest';
import { createInMemoryDocumentStore } from '@subx/ports';
import { scrape } from '@subx/service-kit';
import { jobBacklogGauge } from './backlog.ts';
import { JOBS_COLLECTION } from './store.ts';

const backlog = async () => /^subx_jobs_backlog (\d+)$/m.exec(await scrape())?.[1];

describe('subx_jobs_backlog', () => {
  it("counts every replica's queued and running jobs at each scrape, from the store", async () => {
    const store = createInMemoryDocumentStore();
    const jobs = store.collection(JOBS_COLLECTION);
    for (const [id, status] of [
      ['a', 'queued'],
      ['b', 'running'],
      ['c', 'completed'],
      ['d', 'failed'],
      ['e', 'canceled'],
      ['f', 'queued'],
    ]) {
      await jobs.insertOne({ _id: id!, status: status! });
    }
    const unregister = jobBacklogGauge(store);
    expect(await backlog()).toBe('3');
    await jobs.updateOne({ _id: 'b' }, { $set: { status: 'completed' } });
    expect(await backlog()).toBe('2');
    unregister();
    // Unregistered (the service stopped): the store is read no more, the last value stays.
    await jobs.insertOne({ _id: 'g', status: 'queued' });
    expect(await backlog()).toBe('2');
  });
});

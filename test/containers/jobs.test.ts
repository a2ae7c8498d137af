/**
 * The job service as a container of its own (docker-compose.yml `jobs`): a bulk job posted to the
 * gateway runs there (the job service's own /metrics count it), its items go to the extractor's
 * bulk workers over the Kafka container, and only the videos delivered are charged.
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, containerMetrics, containersOf, eventually, metricSum, waitHealthy } from './stack.ts';

/** Recorded videos with captions, and one id the replay does not know (a failed item, free). */
const WITH_CAPTIONS = ['F1xioXWb8CY', 'it3OtbTxQk0', 'Kn56bMZ9OE8'];
const UNKNOWN = `zz${randomBytes(8).toString('hex').slice(0, 9)}`;

type Job = {
  job_id: string;
  status: string;
  progress: { total: number; succeeded: number; failed: number; pending: number };
  credits_charged: number;
};

async function completedJobs(): Promise<number> {
  let sum = 0;
  for (const id of await containersOf('jobs'))
    sum += metricSum(await containerMetrics(id), 'subx_jobs_finished_total', { status: 'completed' });
  return sum;
}

// Earlier files restart Kafka and the gateway: the job service may still be coming back.
beforeAll(() => waitHealthy(['jobs', 'gateway']), 200_000);

describe('the job service container', () => {
  it('runs a bulk job posted to the gateway and charges the videos it delivered', async () => {
    const before = await completedJobs();
    const balance = async () => Number((await api('/api/v1/account')).json.credits_balance);
    const balanceBefore = await balance();
    const urls = [...WITH_CAPTIONS, UNKNOWN].map((id) => `https://youtu.be/${id}`);
    const created = await api('/api/v1/jobs', { source: { type: 'urls', urls } });
    expect(created.status, JSON.stringify(created.json)).toBe(202);
    const jobId = String(created.json.job_id);

    const job = await eventually(
      `job ${jobId} to end`,
      async () => {
        const { status, json } = await api(`/api/v1/jobs/${jobId}`);
        const doc = json as unknown as Job;
        return status === 200 && ['completed', 'failed', 'canceled'].includes(doc.status) ? doc : undefined;
      },
      120_000,
      1_000,
    );
    expect(job).toMatchObject({
      status: 'completed',
      progress: { total: 4, succeeded: 3, failed: 1, pending: 0 },
      credits_charged: 3,
    });
    const results = await api(`/api/v1/jobs/${jobId}/results?limit=10`);
    expect(results.status).toBe(200);
    const items = results.json.results as { index: number; success: boolean }[];
    expect(items.map((r) => [r.index, r.success])).toEqual([
      [0, true],
      [1, true],
      [2, true],
      [3, false],
    ]);
    // It ran in the job service's container, not in the gateway's.
    expect(await completedJobs()).toBe(before + 1);
    // One credit per video delivered, taken off the account the gateway reads.
    expect(await balance()).toBe(balanceBefore - 3);
  });
});

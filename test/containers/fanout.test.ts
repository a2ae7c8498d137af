/**
 * Batch fan-out across containers over the Kafka container: with `--scale extractor=3` every replica
 * takes jobs; a `docker kill` of an extractor mid-batch and a restart of the Kafka container
 * mid-load lose no usage event and charge nothing twice (the gateway's balance and the billing
 * ledger agree, one ledger line per charge); a gateway restart keeps keys and balances.
 */
import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  api,
  compose,
  containerMetrics,
  containersOf,
  DEMO_ACCOUNT_ID,
  docker,
  eventually,
  metricSum,
  MONGO_DB,
  MONGO_URL,
  waitHealthy,
} from './stack.ts';

const KNOWN = ['F1xioXWb8CY', 'it3OtbTxQk0', 'dsMFmonKDD4', '8VajtrESJzA'];

let mongo: MongoClient;

/** 11-character video ids the replay does not know: each is a job that fails (and is free). */
const unknownIds = (n: number): string[] =>
  Array.from({ length: n }, () => `zz${randomBytes(8).toString('hex').slice(0, 9)}`);

const batch = (ids: string[]) => api('/api/v1/batch', { urls: ids.map((id) => `https://youtu.be/${id}`) });

async function accountCredits(): Promise<number> {
  const account = await mongo
    .db(MONGO_DB)
    .collection<{ _id: string; credits: number }>('accounts')
    .findOne({ _id: DEMO_ACCOUNT_ID });
  if (!account) throw new Error('demo account not seeded');
  return account.credits;
}

async function ledger(): Promise<{ credits: number; entries: number; requests: number }> {
  const entries = await mongo
    .db(MONGO_DB)
    .collection<{ _id: string; account_id: string; credits: number; request_id: string }>('usage_ledger')
    .find({ account_id: DEMO_ACCOUNT_ID })
    .toArray();
  return {
    credits: entries.reduce((sum, e) => sum + e.credits, 0),
    entries: entries.length,
    requests: new Set(entries.map((e) => e.request_id)).size,
  };
}

/** Waits until every credit the gateway took off the demo account is in the billing ledger. */
async function settled(
  creditsAtSeed: number,
): Promise<{ charged: number; ledger: Awaited<ReturnType<typeof ledger>> }> {
  return eventually(
    'the ledger to hold every charge',
    async () => {
      const charged = creditsAtSeed - (await accountCredits());
      const now = await ledger();
      return now.credits === charged ? { charged, ledger: now } : undefined;
    },
    120_000,
    2_000,
  );
}

let creditsAtSeed = 0;

beforeAll(async () => {
  mongo = new MongoClient(MONGO_URL, { serverSelectionTimeoutMS: 10_000 });
  await mongo.connect();
  // What the ledger does not hold yet is in flight; the starting point is the balance plus the ledger.
  creditsAtSeed = (await accountCredits()) + (await ledger()).credits;
});

afterAll(async () => {
  await compose(
    ['up', '-d', '--no-deps', '--no-build', '--wait', '--scale', 'extractor=1', 'extractor'],
    300_000,
  ).catch(() => {});
  await mongo?.close();
});

describe('fan-out over Kafka across containers', () => {
  it('a batch fans out to the extractor containers and answers per item', async () => {
    const { status, json } = await batch([KNOWN[0]!, KNOWN[1]!, ...unknownIds(2)]);
    expect(status).toBe(200);
    const results = json.results as { success: boolean }[];
    expect(results).toHaveLength(4);
    expect(results.filter((r) => r.success)).toHaveLength(2);
  });

  it('--scale extractor=3 spreads the jobs over all three replicas', async () => {
    await compose(
      ['up', '-d', '--no-deps', '--no-build', '--wait', '--scale', 'extractor=3', 'extractor'],
      300_000,
    );
    const replicas = await containersOf('extractor');
    expect(replicas).toHaveLength(3);
    // Each job for a video the replay does not know costs its replica at least one request to the
    // platform: the replica's upstream request counter says who took jobs.
    const upstream = () =>
      Promise.all(
        replicas.map(async (id) => metricSum(await containerMetrics(id), 'subx_upstream_requests_total')),
      );
    const before = await upstream();
    // The new members join the group within a rebalance (session and rebalance timeouts of 10 s):
    // batches keep coming until every replica took some, two minutes at most.
    let taken = before.map(() => 0);
    let jobs = 0;
    const deadline = Date.now() + 120_000;
    while (taken.some((n) => n === 0) && Date.now() < deadline) {
      expect((await batch(unknownIds(10))).status).toBe(200);
      jobs += 10;
      taken = (await upstream()).map((n, i) => n - before[i]!);
      await new Promise((r) => setTimeout(r, 2_000));
    }
    expect(taken.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(jobs);
    for (const n of taken) expect(n, `platform requests per replica: ${taken.join(', ')}`).toBeGreaterThan(0);
  });

  it('docker kill of an extractor mid-batch loses no usage event and charges nothing twice', async () => {
    const replicas = await containersOf('extractor');
    const load = Promise.all(Array.from({ length: 6 }, () => batch([...KNOWN, ...unknownIds(4)])));
    await new Promise((r) => setTimeout(r, 300));
    await docker(['kill', replicas[0]!]);
    const answers = await load;
    for (const { status } of answers) expect(status).toBe(200);
    const { charged, ledger: now } = await settled(creditsAtSeed);
    expect(now.credits).toBe(charged);
    // One ledger line per charged request: a redelivered usage event is not a second line.
    expect(now.entries).toBe(now.requests);
    await compose(
      ['up', '-d', '--no-deps', '--no-build', '--wait', '--scale', 'extractor=3', 'extractor'],
      300_000,
    );
  });

  it('a restart of the Kafka container mid-load loses no usage event and charges nothing twice', async () => {
    // Every replica settled first (the killed one was started again just before).
    await waitHealthy(['extractor', 'gateway', 'billing']);
    await new Promise((r) => setTimeout(r, 10_000));
    const load = (async () => {
      const answers = [];
      for (let i = 0; i < 8; i++) {
        answers.push(await batch([KNOWN[i % KNOWN.length]!, KNOWN[(i + 1) % KNOWN.length]!]));
        await new Promise((r) => setTimeout(r, 500));
      }
      return answers;
    })();
    await new Promise((r) => setTimeout(r, 1_000));
    await compose(['restart', 'kafka'], 180_000);
    const answers = await load;
    expect(answers.filter((a) => a.status === 200).length).toBeGreaterThan(0);
    await waitHealthy(['kafka', 'gateway', 'billing', 'extractor']);
    const { charged, ledger: now } = await settled(creditsAtSeed);
    expect(now.credits).toBe(charged);
    expect(now.entries).toBe(now.requests);
    // and every extractor came through it whole: still serving its metrics
    for (const id of await containersOf('extractor'))
      expect(
        metricSum(await containerMetrics(id), 'subx_bus_messages_consumed_total'),
        id,
      ).toBeGreaterThanOrEqual(0);
  });
});

describe('gateway restart', () => {
  it('keeps keys and balances', async () => {
    await settled(creditsAtSeed);
    // A batch of one replayed video: 1 credit (extract alone is free).
    const before = await batch([KNOWN[0]!]);
    expect(before.status).toBe(200);
    const balance = await settled(creditsAtSeed);
    await compose(['restart', 'gateway'], 180_000);
    await waitHealthy(['gateway']);
    const after = await batch([KNOWN[0]!]);
    expect(after.status, JSON.stringify(after.json)).toBe(200);
    const later = await settled(creditsAtSeed);
    // The key still works, and the balance went on from where it was (one more charged item).
    expect(later.charged).toBe(balance.charged + 1);
  });
});

/**
 * The watch scheduler shares a poll between accounts (src/watches/fair-turns.ts): accounts take
 * turns, one account runs at most WATCH_RUNS_PER_ACCOUNT_PER_POLL watches a poll, runs go
 * WATCH_RUN_CONCURRENCY at a time, and each scheduled run (a listing of the platform) counts
 * against the account's daily request limit, skipped once it is reached. On the in-memory
 * document store and on the MongoDB-compatible server.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import {
  createInMemoryDocumentStore,
  createMongoDocumentStore,
  ManualClock,
  silentLogger,
} from '@subx/ports';
import type { DocumentStore } from '@subx/ports';
import { describeWithEngine } from '@subx/testing/engines';
import { DEFAULT_PRICING } from '@subx/credits';
import type { Account } from '@subx/credits';
import { createJobNotifier } from '../../../jobs/src/jobs/notify.ts';
import { createJobsService } from '../../../jobs/src/jobs/service.ts';
import { createJobStore } from '../../../jobs/src/jobs/store.ts';
import type { JobOptions } from '../../../jobs/src/jobs/model.ts';
import type { WatchDoc } from '../../../jobs/src/watches/model.ts';
import {
  createWatchesService,
  WATCH_RUN_CONCURRENCY,
  WATCH_RUNS_PER_ACCOUNT_PER_POLL,
} from '../../../jobs/src/watches/service.ts';
import { createWatchStore } from '../../../jobs/src/watches/store.ts';
import { buildTestGateway, createTestLedger, START } from './support.ts';
import { CONFIG } from './watches-support.ts';

const BIG: Account = { id: 'acc_big', tier: 'pro' };
const SMALL: Account = { id: 'acc_small', tier: 'pro' };
const jobOptions: JobOptions = {
  language: 'en',
  format: 'json',
  include_timestamps: true,
  include: [],
  translate: false,
};

const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

async function setup(documents: DocumentStore, countScheduledRun?: (account: Account) => Promise<boolean>) {
  const clock = new ManualClock(START);
  const jobStore = createJobStore(documents);
  await jobStore.ensureIndexes();
  const jobs = createJobsService({
    store: jobStore,
    notifier: createJobNotifier({
      store: jobStore,
      events: { publish: async () => {} },
      webhooks: null,
      logger: { warn: () => {} },
    }),
    webhooks: null,
    credits: createTestLedger({ acc_big: 100, acc_small: 100 }).ledger,
    pricing: DEFAULT_PRICING,
    clock,
    resultsTtlMs: 86_400_000,
  });
  const gw = await buildTestGateway({ deps: { clock } });
  apps.push(gw.app);
  /** Listings under way now, and the most at once. */
  const listing = { now: 0, most: 0, of: [] as string[] };
  gw.backends.handlers.listPlaylistVideos = async (req) => {
    listing.now++;
    listing.most = Math.max(listing.most, listing.now);
    listing.of.push(req.playlistId);
    // Held a moment, as a platform listing is: runs that overlap show it here.
    await new Promise((resolve) => setTimeout(resolve, 20));
    listing.now--;
    return {
      playlistId: req.playlistId,
      title: 'Watched',
      uploader: 'U',
      totalVideos: 0,
      videoIds: [],
      hasMore: false,
      cached: false,
    };
  };
  const store = createWatchStore(documents);
  await store.ensureIndexes();
  const watches = createWatchesService({
    store,
    jobs,
    extractor: gw.backends.extractor,
    accountOf: async (id) => [BIG, SMALL].find((a) => a.id === id) ?? null,
    ...(countScheduledRun ? { countScheduledRun } : {}),
    events: { publish: async () => {} },
    webhooks: null,
    pricing: DEFAULT_PRICING,
    clock,
    logger: silentLogger,
    instanceId: 'fairness',
    config: CONFIG,
  });
  /** A watch of the account on its own playlist, due now; each later than the one before. */
  const watch = async (account: Account, name: string) => {
    clock.advance(1_000);
    return (
      await watches.create(
        account,
        {
          source: { type: 'playlist', url: `https://www.youtube.com/playlist?list=PL${name}` },
          interval_minutes: 60,
          backfill: false,
          options: jobOptions,
        },
        `req_${randomUUID()}`,
      )
    ).watch_id;
  };
  const docs = () => documents.collection<WatchDoc>('watches').find({});
  return { clock, watches, watch, listing, docs };
}

function fairnessSuite(makeStore: () => DocumentStore) {
  it('accounts take turns and one account runs at most its share of a poll', async () => {
    const t = await setup(makeStore());
    for (let i = 0; i < 6; i++) await t.watch(BIG, `big${i}`);
    const small = await t.watch(SMALL, 'small');
    t.clock.advance(1_000);
    expect(await t.watches.runDue(4)).toBe(WATCH_RUNS_PER_ACCOUNT_PER_POLL + 1);
    const ran = (await t.docs()).filter((w) => w.runs === 1);
    expect(ran.map((w) => w._id)).toContain(small);
    expect(ran.filter((w) => w.account_id === BIG.id)).toHaveLength(WATCH_RUNS_PER_ACCOUNT_PER_POLL);
    // The big account's next share comes at the next poll, soonest due first.
    expect(await t.watches.runDue(4)).toBe(WATCH_RUNS_PER_ACCOUNT_PER_POLL);
  });

  it('runs a poll several at a time', async () => {
    const t = await setup(makeStore());
    for (let i = 0; i < 2; i++) await t.watch(BIG, `big${i}`);
    for (let i = 0; i < 2; i++) await t.watch(SMALL, `small${i}`);
    t.clock.advance(1_000);
    expect(await t.watches.runDue(10)).toBe(4);
    expect(t.listing.most).toBeGreaterThan(1);
    expect(t.listing.most).toBeLessThanOrEqual(WATCH_RUN_CONCURRENCY);
  });

  it('counts each scheduled run against the daily limit, and skips it once the limit is reached', async () => {
    const counted: string[] = [];
    const t = await setup(makeStore(), async (account) => {
      counted.push(account.id);
      return account.id !== SMALL.id;
    });
    const big = await t.watch(BIG, 'big');
    const small = await t.watch(SMALL, 'small');
    t.clock.advance(1_000);
    expect(await t.watches.runDue(10)).toBe(1);
    expect(counted.sort()).toEqual([BIG.id, SMALL.id]);
    expect(t.listing.of).toEqual(['PLbig']);
    const all = await t.docs();
    expect(all.find((w) => w._id === big)!.last_run?.error).toBeNull();
    const skipped = all.find((w) => w._id === small)!;
    expect(skipped.last_run?.error?.code).toBe('RATE_LIMITED');
    expect(skipped.next_run_at).toBe(t.clock.now() + 60 * 60_000);
  });
}

describe('watch scheduler fairness (in-memory store)', () => {
  fairnessSuite(() => createInMemoryDocumentStore());
});

describeWithEngine('mongo', 'watch scheduler fairness on the MongoDB-compatible server', (mongoUrl) => {
  const stores: DocumentStore[] = [];
  afterAll(async () => {
    for (const s of stores) await s.close();
  });
  fairnessSuite(() => {
    const dbName = `watch_fair_${randomUUID().slice(0, 8)}`;
    const store = createMongoDocumentStore({ url: mongoUrl, dbName });
    stores.push(store);
    return store;
  });
});

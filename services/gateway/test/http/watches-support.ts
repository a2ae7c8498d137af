/**
 * The watches harness for the gateway's HTTP tests: the real routes, watches service and store
 * (in-memory document store), jobs service and job runner (direct fan-out), over fake backends; a
 * second service over the same store stands for another gateway replica.
 */
import { afterEach, expect } from 'vitest';
import { ManualClock, createInMemoryDocumentStore } from '@subx/ports';
import { DEFAULT_PRICING } from '@subx/credits';
import type { AccessPricing } from '@subx/credits';
import { loadJobServiceConfig } from '../../../jobs/src/config.ts';
import { jobsApiOf, watchesApiOf } from '../../../jobs/src/api.ts';
import { createDirectFanOut } from '@subx/fanout';
import type { JobDoc } from '../../../jobs/src/jobs/model.ts';
import { createJobNotifier } from '../../../jobs/src/jobs/notify.ts';
import { createJobRunner } from '../../../jobs/src/jobs/runner.ts';
import type { JobRunner } from '../../../jobs/src/jobs/runner.ts';
import { createJobsService } from '../../../jobs/src/jobs/service.ts';
import { createJobSourceLister } from '../../../jobs/src/jobs/sources.ts';
import { createJobStore } from '../../../jobs/src/jobs/store.ts';
import { createWatchesService } from '../../../jobs/src/watches/service.ts';
import type { WatchEventType, WatchesService } from '../../../jobs/src/watches/service.ts';
import { createWatchStore } from '../../../jobs/src/watches/store.ts';
import type { WatchStore } from '../../../jobs/src/watches/store.ts';
import { KEYS, START, buildTestGateway, createTestLedger } from './support.ts';
import type { TestGateway } from './support.ts';

export const PLAYLIST = 'https://www.youtube.com/playlist?list=PLwatched';
export const CONFIG = {
  WATCH_LEASE_MS: 60_000,
  WATCH_LIST_MAX: 100,
  WATCH_LISTING_TIMEOUT_MS: 5_000,
  WATCH_CAPTION_RETRY_HOURS: 48,
};
const ACCOUNTS: Record<string, 'free' | 'pro'> = { acc_pro: 'pro', acc_pro2: 'pro', acc_free: 'free' };

export interface Harness {
  gw: TestGateway;
  clock: ManualClock;
  store: WatchStore;
  watches: WatchesService;
  /** Another replica's service over the same store. */
  replica: WatchesService;
  events: { type: WatchEventType; run: number }[];
  webhooks: { subject: string; event: string; data: Record<string, unknown> }[];
  playlist: string[];
  /** The account's credits (the ledger the jobs charge). */
  balance(accountId: string): number;
  /** Runs every open job to its end (the job runner's polls). */
  drain(): Promise<void>;
}

let current: Harness | undefined;
let runner: JobRunner | undefined;
afterEach(async () => {
  await runner?.stop(1_000);
  await current?.gw.app.close();
  current = undefined;
  runner = undefined;
});

export async function harness(pricing: AccessPricing = DEFAULT_PRICING): Promise<Harness> {
  const clock = new ManualClock(START);
  const documents = createInMemoryDocumentStore();
  const jobStore = createJobStore(documents);
  await jobStore.ensureIndexes();
  const ledger = createTestLedger({ acc_free: 100, acc_pro: 100, acc_pro2: 100 });
  const notifier = createJobNotifier({
    store: jobStore,
    events: { publish: async () => {} },
    webhooks: null,
    logger: { warn: () => {} },
  });
  const jobs = createJobsService({
    store: jobStore,
    notifier,
    webhooks: null,
    credits: ledger.ledger,
    pricing,
    clock,
    resultsTtlMs: 86_400_000,
  });
  const store = createWatchStore(documents);
  await store.ensureIndexes();
  const events: Harness['events'] = [];
  const webhooks: Harness['webhooks'] = [];
  const h = { playlist: [] as string[] } as Partial<Harness> & { playlist: string[] };
  const service = (instanceId: string, extractor: Parameters<typeof createWatchesService>[0]['extractor']) =>
    createWatchesService({
      store,
      jobs,
      extractor,
      accountOf: async (id) => (ACCOUNTS[id] ? { id, tier: ACCOUNTS[id] } : null),
      events: { publish: async (type, _watch, run) => void events.push({ type, run: run?.run ?? 0 }) },
      webhooks: {
        enqueue: async (input) => void webhooks.push(input),
        checkTarget: async () => {},
      },
      pricing,
      clock,
      logger: { warn: () => {}, info: () => {} },
      instanceId,
      config: CONFIG,
    });
  const gw = await buildTestGateway({ deps: { clock, pricing } });
  const extractor = gw.backends.extractor;
  gw.backends.handlers.listPlaylistVideos = async (req) => ({
    playlistId: req.playlistId,
    title: 'Watched',
    uploader: 'U',
    totalVideos: h.playlist.length,
    videoIds: h.playlist.slice(0, req.maxVideos),
    hasMore: false,
    cached: false,
  });
  const silent = { info: () => {}, warn: () => {}, error: () => {} };
  runner = createJobRunner({
    store: jobStore,
    fanOut: createDirectFanOut({ extractor, concurrency: 4 }),
    lister: createJobSourceLister({ extractor, timeoutMs: 5_000, sleep: async () => {} }),
    extractor,
    credits: ledger.ledger,
    pricing,
    notifier,
    clock,
    logger: silent,
    config: loadJobServiceConfig(
      { LOG_LEVEL: 'silent', JOB_WINDOW_SIZE: '3', JOBS_POLL_MS: '60000' },
      { embedded: true },
    ),
    instanceId: 'runner-a',
    sleep: async () => {},
  });
  const jobRunner = runner;
  const drain = async () => {
    for (let i = 0; i < 100; i++) {
      await jobRunner.pollOnce();
      await jobRunner.idle();
      const open = await documents
        .collection<JobDoc>('jobs')
        .countDocuments({ status: { $in: ['queued', 'running'] } });
      if (open === 0) return;
    }
    throw new Error('jobs did not finish');
  };
  const watches = service('gw-a', extractor);
  const replica = service('gw-b', extractor);
  await gw.app.close();
  const app = await buildTestGateway({
    deps: {
      clock,
      pricing,
      jobs: jobsApiOf(jobs, { extractor, lookupDeadlineMs: 5_000 }),
      watches: watchesApiOf(watches),
      backends: gw.backends,
    },
  });
  // The routes' backends are the ones the watches list through (buildTestGateway's own set is unused).
  current = Object.assign(h, {
    gw: { ...app, backends: gw.backends },
    clock,
    store,
    watches,
    replica,
    events,
    webhooks,
    drain,
    balance: (accountId: string) => ledger.balances.get(accountId) ?? 0,
  }) as Harness;
  return current;
}

export const auth = (key: string) => ({ authorization: `Bearer ${key}` });
export const post = (h: Harness, url: string, payload?: Record<string, unknown>, key: string = KEYS.pro) =>
  h.gw.app.inject({ method: 'POST', url, headers: auth(key), ...(payload === undefined ? {} : { payload }) });
export const get = (h: Harness, url: string, key: string = KEYS.pro) =>
  h.gw.app.inject({ method: 'GET', url, headers: auth(key) });

export async function createWatch(h: Harness, body: Record<string, unknown>) {
  const res = await post(h, '/api/v1/watches', {
    interval_minutes: 60,
    webhook_url: 'https://hooks.example/subx',
    ...body,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { watch_id: string } & Record<string, unknown>;
}
export const run = async (h: Harness, id: string) => {
  const res = await post(h, `/api/v1/watches/${id}/run`);
  return { status: res.statusCode, body: res.json() as Record<string, unknown> };
};

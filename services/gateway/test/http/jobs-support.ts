/**
 * The jobs harness for the gateway's HTTP tests: the real routes, store (in-memory document store),
 * runner, notifier and service, with the direct fan-out over fake backends, and the small helpers
 * the job tests share.
 */
import { afterEach, expect } from 'vitest';
import { Errors } from '@subx/errors';
import { createInMemoryDocumentStore } from '@subx/ports';
import { DEFAULT_PRICING } from '@subx/credits';
import { createDirectFanOut } from '@subx/fanout';
import type { FanOut } from '@subx/fanout';
import type { JobDoc } from '../../../jobs/src/jobs/model.ts';
import { createJobNotifier } from '../../../jobs/src/jobs/notify.ts';
import type { JobEventType, JobWebhookSink } from '../../../jobs/src/jobs/notify.ts';
import { createJobRunner, type JobRunnerDeps } from '../../../jobs/src/jobs/runner.ts';
import type { JobRunner } from '../../../jobs/src/jobs/runner.ts';
import { createJobsService } from '../../../jobs/src/jobs/service.ts';
import { createJobSourceLister } from '../../../jobs/src/jobs/sources.ts';
import { createJobStore } from '../../../jobs/src/jobs/store.ts';
import type { JobStore } from '../../../jobs/src/jobs/store.ts';
import { ManualClock } from '@subx/ports';
import { loadJobServiceConfig } from '../../../jobs/src/config.ts';
import { jobsApiOf } from '../../../jobs/src/api.ts';
import {
  KEYS,
  START,
  buildTestGateway,
  createFakeBackends,
  createTestLedger,
  transcript,
} from './support.ts';
import type { FakeBackends, TestGateway } from './support.ts';

export const REAL = ['dQw4w9WgXcQ', 'jNQXAC9IVRw', '9bZkp7q19f0', 'kJQP7kiw5Fk', 'F1xioXWb8CY'];
export const UNKNOWN = ['aaaaaaaaaaa', 'bbbbbbbbbbb', 'ccccccccccc'];
export const watch = (id: string) => `https://www.youtube.com/watch?v=${id}`;

export interface JobsHarness {
  app: TestGateway['app'];
  backends: FakeBackends;
  ledger: ReturnType<typeof createTestLedger>;
  clock: ManualClock;
  store: JobStore;
  runner: JobRunner;
  events: { type: JobEventType; job: JobDoc }[];
  webhooks: Parameters<JobWebhookSink['enqueue']>[0][];
  /** Runs every runnable job to its end. */
  drain(): Promise<void>;
  newRunner(instanceId: string, fanOut?: FanOut): JobRunner;
}

const harnesses: JobsHarness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) {
    await h.runner.stop(1_000);
    await h.app.close();
  }
});

export async function jobsGateway(
  options: {
    balances?: Record<string, number>;
    env?: Record<string, string>;
    /** The runner's daily model budget (absent: none kept). */
    modelBudget?: NonNullable<JobRunnerDeps['modelBudget']>;
  } = {},
): Promise<JobsHarness> {
  const env = { LOG_LEVEL: 'silent', JOB_WINDOW_SIZE: '3', JOBS_POLL_MS: '60000', ...options.env };
  const config = loadJobServiceConfig(env, { embedded: true });
  const backends = createFakeBackends();
  const ledger = createTestLedger(
    options.balances ?? { acc_free: 100, acc_pro: 100, acc_pro2: 100, acc_ent: 1000 },
  );
  const clock = new ManualClock(START);
  const documents = createInMemoryDocumentStore();
  const store = createJobStore(documents);
  await store.ensureIndexes();
  const events: JobsHarness['events'] = [];
  const webhooks: JobsHarness['webhooks'] = [];
  const notifier = createJobNotifier({
    store,
    events: { publish: async (type, job) => void events.push({ type, job }) },
    webhooks: { enqueue: async (input) => void webhooks.push(input) },
    logger: { warn: () => {} },
  });
  const silent = { info: () => {}, warn: () => {}, error: () => {} };
  const newRunner = (instanceId: string, fanOut?: FanOut) =>
    createJobRunner({
      store,
      fanOut: fanOut ?? createDirectFanOut({ extractor: backends.extractor, concurrency: 4 }),
      lister: createJobSourceLister({
        extractor: backends.extractor,
        timeoutMs: 5_000,
        sleep: async () => {},
      }),
      extractor: backends.extractor,
      credits: ledger.ledger,
      pricing: DEFAULT_PRICING,
      notifier,
      clock,
      logger: silent,
      config,
      instanceId,
      sleep: async () => {},
      ...(options.modelBudget ? { modelBudget: options.modelBudget } : {}),
    });
  const service = createJobsService({
    store,
    notifier,
    webhooks: null,
    credits: ledger.ledger,
    pricing: DEFAULT_PRICING,
    clock,
    resultsTtlMs: config.JOB_RESULTS_TTL,
  });
  // One fake extractor for the routes (a dry run's durations) and the runner.
  const gw = await buildTestGateway({
    env,
    deps: {
      jobs: jobsApiOf(service, { extractor: backends.extractor, lookupDeadlineMs: config.GRPC_DEADLINE_MS }),
      backends,
    },
  });
  const runner = newRunner('runner-a');
  const harness: JobsHarness = {
    app: gw.app,
    backends,
    ledger,
    clock,
    store,
    runner,
    events,
    webhooks,
    newRunner,
    async drain() {
      for (let i = 0; i < 100; i++) {
        await runner.pollOnce();
        await runner.idle();
        const open = await documents
          .collection<JobDoc>('jobs')
          .countDocuments({ status: { $in: ['queued', 'running'] } });
        if (open === 0) return;
      }
      throw new Error('jobs did not finish');
    },
  };
  harnesses.push(harness);
  return harness;
}

export const auth = (key: string) => ({ authorization: `Bearer ${key}` });

/** GET /api/v1/jobs/{id} with the Pro key: the job as its owner sees it. */
export async function getJob(h: JobsHarness, jobId: string) {
  return (
    await h.app.inject({ method: 'GET', url: `/api/v1/jobs/${jobId}`, headers: auth(KEYS.pro) })
  ).json();
}

export async function createJob(
  h: JobsHarness,
  body: Record<string, unknown>,
  key: string = KEYS.pro,
  headers = {},
) {
  return h.app.inject({
    method: 'POST',
    url: '/api/v1/jobs',
    headers: { ...auth(key), ...headers },
    payload: body,
  });
}

export function unknownVideos(h: JobsHarness, unknown: readonly string[]) {
  h.backends.handlers.getTranscript = async (req) => {
    if (unknown.includes(req.videoId)) throw Errors.videoNotFound(req.videoId);
    return transcript(req.videoId);
  };
}

export async function allResults(h: JobsHarness, jobId: string, limit: number, key: string = KEYS.pro) {
  const seen: Record<string, unknown>[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 1_000; page++) {
    const response: {
      statusCode: number;
      json(): { results: Record<string, unknown>[]; next_cursor: string | null };
    } = await h.app.inject({
      method: 'GET',
      url: `/api/v1/jobs/${jobId}/results?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`,
      headers: auth(key),
    });
    expect(response.statusCode).toBe(200);
    const body: { results: Record<string, unknown>[]; next_cursor: string | null } = response.json();
    seen.push(...body.results);
    cursor = body.next_cursor;
    if (cursor === null) return seen;
  }
  throw new Error('results never ended');
}

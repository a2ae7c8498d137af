/**
 * Test doubles for the gateway's HTTP tests: in-memory AccessControl / CreditLedger /
 * IdempotencyStore / IpRateLimiter implementing access/types.ts, a small KeyValueStore, and fake
 * backends (objects implementing @subx/backends' types.ts) whose answers each test sets.
 */
import type { FastifyInstance } from 'fastify';
import { commonV1 } from '@subx/contracts';
import type { aiV1, billingV1, commentsV1, extractorV1 } from '@subx/contracts';
import { answerHeadJson, publicSegmentsJson } from '@subx/formats';
import { AppError, Errors } from '@subx/errors';
import { ManualClock, createInMemoryKeyValueStore } from '@subx/ports';
import type { KeyValueStore } from '@subx/ports';
import { buildApp } from '../../src/app.ts';
import { subtitleTypeName } from '@subx/public-api';
import { attachRateLimit, createAccountReadLimiter } from '../../src/access/rate-limit.ts';
import type { AccountReadLimiter, IpRateLimiter } from '../../src/access/rate-limit.ts';
import { tierAllows, DEFAULT_PRICING } from '@subx/credits';
import type { AccessControl, IdempotencyStore, StoredResponse } from '../../src/access/types.ts';
import type { RateLimitState } from '@subx/credits';
import type { CreditLedger, Operation, Tier, UsageReport } from '@subx/credits';
import type { Backends, CallOptions } from '@subx/backends';
import { loadConfig } from '../../src/config.ts';
import type { Config } from '../../src/config.ts';
import type { GatewayDeps } from '../../src/deps.ts';
import { createDirectFanOut } from '@subx/fanout';

export const KEYS = {
  free: 'sxk_v1_FREEaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
  pro: 'sxk_v1_PROaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
  pro2: 'sxk_v1_PRO2aaaaaaaaaaaaaaaaaaaaaaaaaaaa',
  enterprise: 'sxk_v1_ENTaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
} as const;

export const START = Date.UTC(2026, 2, 10, 12, 0, 0);
export const NEXT_MIDNIGHT = Date.UTC(2026, 2, 11);

export function createTestAccess(options: { dailyLimits?: Partial<Record<Tier, number | null>> } = {}) {
  const accounts = new Map<string, { id: string; tier: Tier }>([
    [KEYS.free, { id: 'acc_free', tier: 'free' }],
    [KEYS.pro, { id: 'acc_pro', tier: 'pro' }],
    [KEYS.pro2, { id: 'acc_pro2', tier: 'pro' }],
    [KEYS.enterprise, { id: 'acc_ent', tier: 'enterprise' }],
  ]);
  const limits = { ...DEFAULT_PRICING.dailyLimit, ...options.dailyLimits };
  const used = new Map<string, number>();
  const refunds: string[] = [];
  const state = (id: string, tier: Tier): RateLimitState => {
    const limit = limits[tier];
    return {
      limit,
      remaining: limit === null ? null : Math.max(0, limit - (used.get(id) ?? 0)),
      resetAtMs: NEXT_MIDNIGHT,
    };
  };
  const access: AccessControl = {
    authenticate: async (apiKey) => (apiKey === undefined ? null : (accounts.get(apiKey) ?? null)),
    async authorize({ apiKey }) {
      const account = apiKey === undefined ? undefined : accounts.get(apiKey);
      if (!account) throw Errors.unauthorized();
      return account;
    },
    async admit({ apiKey, operation }) {
      const account = apiKey === undefined ? undefined : accounts.get(apiKey);
      if (!account) throw Errors.unauthorized();
      const required = DEFAULT_PRICING.minimumTier[operation];
      if (!tierAllows(account.tier, required)) {
        throw attachRateLimit(Errors.tierRequired(required, account.tier), state(account.id, account.tier));
      }
      const limit = limits[account.tier];
      const count = used.get(account.id) ?? 0;
      if (limit !== null && count >= limit) {
        throw attachRateLimit(
          Errors.rateLimited('Daily request limit reached.', 3600),
          state(account.id, account.tier),
        );
      }
      used.set(account.id, count + 1);
      let refunded = false;
      return {
        account,
        rateLimit: state(account.id, account.tier),
        refund: async () => {
          if (refunded) return;
          refunded = true;
          refunds.push(account.id);
          used.set(account.id, (used.get(account.id) ?? 1) - 1);
        },
      };
    },
  };
  return { access, used, refunds, limits };
}

export interface LedgerEvent {
  accountId: string;
  operation: Operation;
  credits: number;
  usage: UsageReport | undefined;
}

export function createTestLedger(initial: Record<string, number> = {}) {
  const balances = new Map<string, number>(Object.entries(initial));
  const events: LedgerEvent[] = [];
  const reservations: {
    id: string;
    accountId: string;
    operation: Operation;
    amount: number;
    state: string;
  }[] = [];
  const charge = (accountId: string, operation: Operation, credits: number, usage?: UsageReport) => {
    if (credits > 0) events.push({ accountId, operation, credits, usage });
  };
  const ledger: CreditLedger = {
    async reserve({ accountId, operation, amount, id }) {
      const available = balances.get(accountId) ?? 0;
      if (available < amount) throw Errors.insufficientCredits(amount, available);
      balances.set(accountId, available - amount);
      const record = {
        id: id ?? `res-${reservations.length + 1}`,
        accountId,
        operation,
        amount,
        state: 'reserved',
      };
      reservations.push(record);
      const reservation = {
        id: record.id,
        reserved: amount,
        remaining: undefined as number | undefined,
        async commit(credits: number, usage?: UsageReport) {
          if (record.state !== 'reserved') return;
          if (credits < 0 || credits > amount) throw new Error(`commit ${credits} outside 0..${amount}`);
          record.state = 'committed';
          balances.set(accountId, (balances.get(accountId) ?? 0) + amount - credits);
          // As the real ledger: the balance after a charging commit.
          if (credits > 0) reservation.remaining = balances.get(accountId);
          charge(accountId, operation, credits, usage);
        },
        async release() {
          if (record.state !== 'reserved') return;
          record.state = 'released';
          balances.set(accountId, (balances.get(accountId) ?? 0) + amount);
        },
      };
      return reservation;
    },
    // As the real ledger: commit what is still held, else charge once more under a derived id.
    async settleLeftover({ reservationId, accountId, operation, credits, usage }) {
      const record = reservations.find((r) => r.id === reservationId);
      if (record?.state === 'committed') return 'committed';
      if (record?.state === 'reserved') {
        record.state = 'committed';
        balances.set(accountId, (balances.get(accountId) ?? 0) + record.amount - credits);
        charge(accountId, operation, credits, usage);
        return 'settled';
      }
      if (credits === 0) return 'settled';
      if (reservations.some((r) => r.id === `${reservationId}:make-up`)) return 'made_up';
      const available = balances.get(accountId) ?? 0;
      if (available < credits) return 'unpaid';
      balances.set(accountId, available - credits);
      reservations.push({
        id: `${reservationId}:make-up`,
        accountId,
        operation,
        amount: credits,
        state: 'committed',
      });
      charge(accountId, operation, credits, usage);
      return 'made_up';
    },
  };
  return { ledger, balances, events, reservations };
}

export function createTestIdempotency(): IdempotencyStore {
  const entries = new Map<string, { fingerprint: string; response?: StoredResponse }>();
  return {
    async claim(accountId, key, fingerprint) {
      const id = `${accountId}:${key}`;
      const entry = entries.get(id);
      if (!entry) {
        entries.set(id, { fingerprint });
        return { kind: 'new' };
      }
      if (entry.fingerprint !== fingerprint) {
        throw Errors.invalidRequest('This Idempotency-Key was used with a different request.');
      }
      return entry.response ? { kind: 'replay', response: entry.response } : { kind: 'in_progress' };
    },
    async complete(accountId, key, response) {
      const entry = entries.get(`${accountId}:${key}`);
      if (entry) entry.response = response;
    },
    async abandon(accountId, key) {
      entries.delete(`${accountId}:${key}`);
    },
  };
}

export function createTestIpLimiter(limit = 1000): IpRateLimiter & { counts: Map<string, number> } {
  const counts = new Map<string, number>();
  return {
    counts,
    async check(ip) {
      const n = (counts.get(ip) ?? 0) + 1;
      counts.set(ip, n);
      if (n > limit)
        throw Errors.rateLimited(
          `Too many requests from this address: the limit is ${limit} per minute.`,
          42,
        );
    },
  };
}

/** The real per-account read limiter over the embedded store, on the given clock. */
export function createTestReadLimiter(clock: ManualClock, limitPerMinute = 1000): AccountReadLimiter {
  return createAccountReadLimiter({ kv: createInMemoryKeyValueStore({ clock }), clock, limitPerMinute });
}

/** Enough of KeyValueStore for the gateway (summary paid markers). */
export function createTestKv(): KeyValueStore & { data: Map<string, string> } {
  const data = new Map<string, string>();
  return {
    data,
    get: async (k) => data.get(k) ?? null,
    set: async (k, v) => void data.set(k, v),
    setIfAbsent: async (k, v) => (data.has(k) ? false : (data.set(k, v), true)),
    delete: async (k) => void data.delete(k),
    deleteByPrefix: async (prefix) => {
      const keys = [...data.keys()].filter((k) => k.startsWith(prefix));
      for (const k of keys) data.delete(k);
      return keys.length;
    },
    ttlMs: async () => null,
    increment: async (k, by) => {
      const n = Number(data.get(k) ?? 0) + by;
      data.set(k, String(n));
      return n;
    },
    incrementWithin: async (k, by, limit) => {
      const n = Number(data.get(k) ?? 0) + by;
      if (n > limit) return { applied: false, value: n - by };
      data.set(k, String(n));
      return { applied: true, value: n };
    },
    clientId: 'test-kv',
    publish: async () => 0,
    subscribe: async () => async () => {},
    ping: async () => {},
    close: async () => {},
  };
}

// ---- fake backends -------------------------------------------------------------------------

/** An answer's overrides; segments may leave out `words` (none: the source timed no words). */
export type TranscriptOverrides = Partial<Omit<extractorV1.GetTranscriptResponse, 'segments'>> & {
  segments?: (Omit<commonV1.Segment, 'words'> & Partial<Pick<commonV1.Segment, 'words'>>)[];
};

export function transcript(videoId: string, overrides: TranscriptOverrides = {}) {
  const { segments = DEFAULT_SEGMENTS, ...rest } = overrides;
  return {
    videoId,
    language: 'en',
    subtitleType: commonV1.SubtitleType.SUBTITLE_TYPE_MANUAL,
    segments: segments.map((s) => ({ words: [], ...s })),
    metadata: {
      title: `Video ${videoId}`,
      channel: 'Channel',
      channelId: 'UC123',
      duration: 125,
      uploadDate: '20240102',
      thumbnailUrl: `https://i.ytimg.com/vi/${videoId}/hqdefault.jpg`,
    },
    cached: false,
    fetchedAt: '2026-03-10T11:00:00.000Z',
    segmentsJson: '',
    segmentsJsonUtf8: Buffer.alloc(0),
    headJsonUtf8: Buffer.alloc(0),
    source: 'captions',
    audioSeconds: 0,
    fallbackReason: '',
    upstreamReason: '',
    ...rest,
  } satisfies extractorV1.GetTranscriptResponse;
}

const DEFAULT_SEGMENTS = [
  { text: 'Hello world', start: 0, duration: 1.5 },
  { text: 'Second line', start: 1.5, duration: 2 },
];

/** transcript() as an extractor of today answers it: segments_json rendered by the fake backends. */
export function transcriptAnswer(videoId: string, overrides: TranscriptOverrides = {}): TranscriptAnswer {
  const {
    segmentsJson: _json,
    segmentsJsonUtf8: _bytes,
    headJsonUtf8: _head,
    ...answer
  } = transcript(videoId, overrides);
  return answer;
}

type Handler<Req, Res> = (request: Req, options: CallOptions | undefined) => Promise<Res>;

/**
 * A fake extractor's answer: segments_json, segments_json_utf8 and head_json_utf8 may be left out
 * (the fake backends answer them as the extractor does).
 */
export type TranscriptAnswer = Omit<
  extractorV1.GetTranscriptResponse,
  'segmentsJson' | 'segmentsJsonUtf8' | 'headJsonUtf8'
> & {
  segmentsJson?: string;
  segmentsJsonUtf8?: Uint8Array;
  headJsonUtf8?: Uint8Array;
};

/**
 * What the extractor does with GetTranscriptRequest.answer_json: the segments as the public JSON
 * array's UTF-8 bytes in segments_json_utf8 and the members before them in head_json_utf8 instead
 * of the metadata. A handler that already set any of segments_json, segments_json_utf8 or
 * head_json_utf8 is taken as it is (an extractor older than answer_json: segments, and none of
 * them, with `headJsonUtf8: Buffer.alloc(0)`).
 */
function asExtractorAnswers(
  request: extractorV1.GetTranscriptRequest,
  answer: TranscriptAnswer,
): extractorV1.GetTranscriptResponse {
  const { segmentsJson, segmentsJsonUtf8, headJsonUtf8 } = answer;
  if (
    segmentsJson !== undefined ||
    segmentsJsonUtf8 !== undefined ||
    headJsonUtf8 !== undefined ||
    !request.answerJson
  ) {
    return {
      ...answer,
      segmentsJson: segmentsJson ?? '',
      segmentsJsonUtf8: segmentsJsonUtf8 ?? Buffer.alloc(0),
      headJsonUtf8: headJsonUtf8 ?? Buffer.alloc(0),
    };
  }
  const json = publicSegmentsJson(answer.segments);
  const withBytes = { ...answer, segments: [], segmentsJson: '', segmentsJsonUtf8: Buffer.from(json) };
  const head = answerHeadJson({
    videoId: answer.videoId,
    metadata: answer.metadata,
    include: request.include,
    language: answer.language,
    subtitleType: subtitleTypeName(answer.subtitleType),
  });
  return { ...withBytes, metadata: undefined, headJsonUtf8: Buffer.from(head) };
}

export interface FakeBackends extends Backends {
  calls: { method: string; request: unknown; options: CallOptions | undefined }[];
  handlers: {
    getTranscript: Handler<extractorV1.GetTranscriptRequest, TranscriptAnswer>;
    validateVideo: Handler<extractorV1.ValidateVideoRequest, extractorV1.ValidateVideoResponse>;
    getPlaylist: Handler<extractorV1.GetPlaylistRequest, extractorV1.GetPlaylistResponse>;
    listPlaylistVideos: Handler<
      extractorV1.ListPlaylistVideosRequest,
      extractorV1.ListPlaylistVideosResponse
    >;
    listChannelVideos: Handler<extractorV1.ListChannelVideosRequest, extractorV1.ListChannelVideosResponse>;
    search: Handler<extractorV1.SearchRequest, extractorV1.SearchResponse>;
    listSearchVideos: Handler<extractorV1.ListSearchVideosRequest, extractorV1.ListSearchVideosResponse>;
    getComments: Handler<commentsV1.GetCommentsRequest, commentsV1.GetCommentsResponse>;
    summarize: Handler<aiV1.SummarizeRequest, aiV1.SummarizeResponse>;
    analyzeComments: Handler<aiV1.AnalyzeCommentsRequest, aiV1.AnalyzeCommentsResponse>;
    getUsage: Handler<billingV1.GetUsageRequest, billingV1.GetUsageResponse>;
  };
  healthy: Record<'extractor' | 'comments' | 'ai' | 'billing', boolean>;
  /** What the extractor says of the video platform (checkPlatform). */
  platform: { reachable: boolean };
}

export function createFakeBackends(): FakeBackends {
  const calls: FakeBackends['calls'] = [];
  const unexpected = (name: string) => async () => {
    throw new Error(`unexpected call ${name}`);
  };
  const handlers: FakeBackends['handlers'] = {
    getTranscript: async (req) => transcriptAnswer(req.videoId),
    validateVideo: unexpected('validateVideo'),
    getPlaylist: unexpected('getPlaylist'),
    listPlaylistVideos: unexpected('listPlaylistVideos'),
    listChannelVideos: unexpected('listChannelVideos'),
    search: unexpected('search'),
    listSearchVideos: unexpected('listSearchVideos'),
    getComments: unexpected('getComments'),
    summarize: unexpected('summarize'),
    analyzeComments: unexpected('analyzeComments'),
    getUsage: unexpected('getUsage'),
  };
  const healthy = { extractor: true, comments: true, ai: true, billing: true };
  const call =
    <K extends keyof FakeBackends['handlers']>(method: K) =>
    (request: Parameters<FakeBackends['handlers'][K]>[0], options?: CallOptions) => {
      calls.push({ method, request, options });
      return (handlers[method] as Handler<unknown, unknown>)(request, options) as ReturnType<
        FakeBackends['handlers'][K]
      >;
    };
  const health = (name: keyof typeof healthy) => async () => healthy[name];
  const platform = { reachable: true };
  return {
    calls,
    handlers,
    healthy,
    platform,
    extractor: {
      getTranscript: (request, options) =>
        call('getTranscript')(request, options).then((answer) => asExtractorAnswers(request, answer)),
      validateVideo: call('validateVideo'),
      getPlaylist: call('getPlaylist'),
      listPlaylistVideos: call('listPlaylistVideos'),
      listChannelVideos: call('listChannelVideos'),
      search: call('search'),
      listSearchVideos: call('listSearchVideos'),
      checkHealth: health('extractor'),
      checkPlatform: async () => platform.reachable,
    },
    comments: { getComments: call('getComments'), checkHealth: health('comments') },
    ai: { summarize: call('summarize'), analyzeComments: call('analyzeComments'), checkHealth: health('ai') },
    billing: { getUsage: call('getUsage'), checkHealth: health('billing') },
  };
}

export interface TestGateway {
  app: FastifyInstance;
  backends: FakeBackends;
  ledger: ReturnType<typeof createTestLedger>;
  access: ReturnType<typeof createTestAccess>;
  ipLimiter: ReturnType<typeof createTestIpLimiter>;
  kv: ReturnType<typeof createTestKv>;
  clock: ManualClock;
  config: Config;
}

export async function buildTestGateway(
  options: {
    env?: Record<string, string>;
    balances?: Record<string, number>;
    dailyLimits?: Partial<Record<Tier, number | null>>;
    ipLimit?: number;
    /** The free reads' per-account limit per minute (default 1000). */
    readLimit?: number;
    deps?: Partial<GatewayDeps>;
  } = {},
): Promise<TestGateway> {
  const config = loadConfig({ LOG_LEVEL: 'silent', ...options.env });
  const backends = createFakeBackends();
  const ledger = createTestLedger(
    options.balances ?? { acc_free: 100, acc_pro: 100, acc_pro2: 100, acc_ent: 1000 },
  );
  const access = createTestAccess({ dailyLimits: options.dailyLimits });
  const ipLimiter = createTestIpLimiter(options.ipLimit);
  const kv = createTestKv();
  const clock = new ManualClock(START);
  const app = await buildApp({
    config,
    access: access.access,
    credits: ledger.ledger,
    idempotency: createTestIdempotency(),
    ipLimiter,
    readLimiter: createTestReadLimiter(clock, options.readLimit),
    accountStanding: async ({ id, tier }) => {
      const limit = access.limits[tier];
      const dailyUsed = access.used.get(id) ?? 0;
      const remaining = limit === null ? null : Math.max(0, limit - dailyUsed);
      return {
        creditsBalance: ledger.balances.get(id) ?? 0,
        dailyUsed,
        daily: { limit, remaining, resetAtMs: NEXT_MIDNIGHT },
      };
    },
    backends,
    fanOut: createDirectFanOut({ extractor: backends.extractor, concurrency: config.FANOUT_CONCURRENCY }),
    kv,
    clock,
    version: '1.2.3',
    ...options.deps,
  });
  return { app, backends, ledger, access, ipLimiter, kv, clock, config };
}

export function appError(code: ConstructorParameters<typeof AppError>[0], message: string, reason?: string) {
  return new AppError(code, message, reason ? { reason } : {});
}

export const VIDEO = 'dQw4w9WgXcQ';
export const VIDEO_URL = `https://www.youtube.com/watch?v=${VIDEO}`;

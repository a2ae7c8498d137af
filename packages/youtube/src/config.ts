import { readFileSync, statSync } from 'node:fs';
import { z } from 'zod';
import { Errors } from '@subx/errors';
import {
  ConfigError,
  csvOf,
  durationMsBetween,
  httpUrl,
  intBetween,
  jsonOf,
  loadConfig,
  numberBetween,
  secret,
} from '@subx/service-kit/config';
import type { ConfigIssue } from '@subx/service-kit/config';
import { DEFAULT_CAPTION_CLIENTS, DEFAULT_CLIENTS, isWebFamily, type InnertubeClient } from './clients.ts';
import { parseCanaryVideos } from './canary/videos.ts';
import type { UpstreamEndpoint } from './observer.ts';

export interface SessionConfig {
  /** Visitor sessions kept in the pool (each its own visitorData; tied to a proxy when proxies are set). */
  size: number;
  /** A session is replaced after serving this many videos (the platform counts /player calls per visitor). */
  rotateEvery: number;
  /** Where fresh visitor data comes from. */
  bootstrap: 'visitor_id' | 'sw_js_data';
}

export interface BreakerConfig {
  /** Blocked or rate-limited answers in the window before the breaker may open... */
  minBlocks: number;
  /** ...and their share of all answers in the window (0-1). */
  ratio: number;
  windowMs: number;
  /** How long the platform is left alone once the breaker opens (then one probe request). */
  cooldownMs: number;
}

interface PacingConfig {
  /** `auto`: paced when talking to the real platform (youtube.com), not a fake or a replay. */
  mode: 'auto' | 'on' | 'off';
  /** Requests per minute per egress, after the burst. */
  perMinute: number;
  /** Requests a quiet egress may send at once. */
  burst: number;
  /** What a translated-track request (`tlang`) costs, in plain requests: the platform limits those first. */
  translatedCost: number;
  /** The longest a request waits for its turn before it is answered UPSTREAM_BLOCKED (`paced`). */
  maxWaitMs: number;
}

/** Whether requests to `baseUrl` are paced: always, never, or (auto) only for the platform itself. */
export function pacingApplies(config: Pick<YouTubeClientConfig, 'baseUrl' | 'pacing'>): boolean {
  if (config.pacing.mode !== 'auto') return config.pacing.mode === 'on';
  return /(^|\.)youtube\.com$/i.test(new URL(config.baseUrl).hostname);
}

/** Which InnerTube clients exist and how the caption ladder uses them: what YOUTUBE_CLIENTS sets. */
export type ClientIdentities = Pick<YouTubeClientConfig, 'clients' | 'captionClients' | 'webClient'>;

export interface YouTubeClientConfig {
  /** Every request goes here; absolute platform URLs in responses are re-based onto it. */
  baseUrl: string;
  /** Per upstream request. */
  timeoutMs: number;
  /** Retries on network errors and 5xx (not on 4xx, blocks or timeouts). */
  retries: number;
  /** Base of the jittered exponential backoff. */
  retryBaseMs: number;
  /** HTTP(S) proxy URLs; each session is tied to one, and a blocked request moves to the next. */
  proxies: string[];
  /** With exactly one (rotating) proxy: a blocked request is retried on a new connection this many times. */
  blockedRetries: number;
  clients: Record<string, InnertubeClient>;
  /** The caption ladder: /player clients in order, whose caption URLs are not gated. */
  captionClients: string[];
  /** The adaptive ladder: refusals in a row that take a client out, and how often an out client is probed. */
  ladder: { retireAfter: number; probeIntervalMs: number };
  /** With several proxies: how long an egress that drew a bot check or a 429 is skipped before its probe. */
  egressQuarantineMs: number;
  /** Requests per egress address kept under the rates that get it blocked (egress/pacing.ts). */
  pacing: PacingConfig;
  /** Client for /next, /browse and the masked metadata /player. */
  webClient: string;
  /**
   * A file of client identities (the YOUTUBE_CLIENTS format, e.g. a mounted ConfigMap), read again
   * every `clientsFileCheckMs` while running: a valid change applies without a restart, an invalid one
   * is logged and the identities in use are kept (identities/clients-file.ts).
   */
  clientsFile: string | undefined;
  clientsFileCheckMs: number;
  /** Canaries (canary/canary.ts): off while `videos` is empty (CANARY_VIDEOS unset). */
  canary: { videos: { id: string; language: string }[]; intervalMs: number };
  /** The HTTP API of a bgutil PO-token provider; with it WEB caption URLs get `pot` and WEB joins the ladder. */
  poTokenProviderUrl: string | undefined;
  sessions: SessionConfig;
  breaker: BreakerConfig;
  /** Read the live WEB client version from /sw.js_data at most this often (0: only on FAILED_PRECONDITION). */
  versionRefreshMs: number;
  /** Largest answer read per endpoint; a larger one is cut off and answered UPSTREAM_ERROR. */
  maxBodyBytes: Record<UpstreamEndpoint, number>;
  hl: string;
  gl: string;
  /** Concurrent reply-page requests while downloading comments. */
  commentConcurrency: number;
}

const MiB = 1024 * 1024;

/**
 * Body caps per endpoint, from the largest recorded answers with head room: a full WEB /player is
 * ~1.5 MB, watch-next ~1 MB, a 100-video browse page ~0.8 MB, a search page ~0.7 MB, a 3-hour json3
 * caption body 1.3 MB.
 */
const DEFAULT_MAX_BODY_BYTES: Record<UpstreamEndpoint, number> = {
  player: 8 * MiB,
  next: 8 * MiB,
  browse: 8 * MiB,
  resolve_url: 1 * MiB,
  search: 4 * MiB,
  timedtext: 16 * MiB,
  visitor_id: 1 * MiB,
  sw_js_data: 1 * MiB,
};

export const DEFAULT_CONFIG: YouTubeClientConfig = {
  baseUrl: 'https://www.youtube.com',
  timeoutMs: 10_000,
  retries: 2,
  retryBaseMs: 250,
  proxies: [],
  blockedRetries: 2,
  clients: DEFAULT_CLIENTS,
  captionClients: DEFAULT_CAPTION_CLIENTS,
  ladder: { retireAfter: 3, probeIntervalMs: 60_000 },
  egressQuarantineMs: 300_000,
  pacing: { mode: 'auto', perMinute: 30, burst: 20, translatedCost: 4, maxWaitMs: 10_000 },
  webClient: 'WEB',
  poTokenProviderUrl: undefined,
  clientsFile: undefined,
  clientsFileCheckMs: 10_000,
  canary: { videos: [], intervalMs: 900_000 },
  sessions: { size: 4, rotateEvery: 50, bootstrap: 'visitor_id' },
  breaker: { minBlocks: 10, ratio: 0.5, windowMs: 60_000, cooldownMs: 30_000 },
  versionRefreshMs: 6 * 3_600_000,
  maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
  hl: 'en',
  gl: 'US',
  commentConcurrency: 4,
};

type Env = Record<string, string | undefined>;

const DAY_MS = 86_400_000;

/** YOUTUBE_CLIENTS's JSON, in the variable or in the identities file (YOUTUBE_CLIENTS_FILE). */
const ClientsJsonSchema = z.object(
  {
    order: z
      .array(z.string(), { error: 'must be a non-empty array of client names' })
      .min(1, { error: 'must be a non-empty array of client names' })
      .optional(),
    web: z.string({ error: 'must be a client name' }).optional(),
    clients: z.record(z.string(), z.looseObject({}), { error: 'must be an object' }).optional(),
  },
  { error: 'must be a JSON object with optional order, web and clients' },
);

/** The YOUTUBE_* variables, read with the env helpers every service uses (service-kit config). */
export const YouTubeEnvSchema = z.object({
  YOUTUBE_BASE_URL: httpUrl.optional(),
  /** Proxy URLs carry credentials: never echoed, never logged. */
  YOUTUBE_PROXIES: secret(csvOf(httpUrl)).optional(),
  YOUTUBE_PO_TOKEN_PROVIDER_URL: httpUrl.optional(),
  YOUTUBE_SESSION_BOOTSTRAP: z
    .enum(['visitor_id', 'sw_js_data'], { error: 'must be visitor_id or sw_js_data' })
    .default(DEFAULT_CONFIG.sessions.bootstrap),
  YOUTUBE_MAX_BODY_BYTES: intBetween(1024, 256 * MiB).optional(),
  YOUTUBE_TIMEOUT_MS: durationMsBetween(100, 120_000).default(DEFAULT_CONFIG.timeoutMs),
  YOUTUBE_RETRIES: intBetween(0, 10).default(DEFAULT_CONFIG.retries),
  YOUTUBE_RETRY_BASE_MS: durationMsBetween(0, 60_000).default(DEFAULT_CONFIG.retryBaseMs),
  YOUTUBE_BLOCKED_RETRIES: intBetween(0, 10).default(DEFAULT_CONFIG.blockedRetries),
  YOUTUBE_SESSIONS: intBetween(1, 1000).default(DEFAULT_CONFIG.sessions.size),
  YOUTUBE_SESSION_ROTATE_EVERY: intBetween(1, 100_000).default(DEFAULT_CONFIG.sessions.rotateEvery),
  YOUTUBE_BREAKER_MIN_BLOCKS: intBetween(1, 1_000_000).default(DEFAULT_CONFIG.breaker.minBlocks),
  YOUTUBE_BREAKER_RATIO: numberBetween(0, 1).default(DEFAULT_CONFIG.breaker.ratio),
  YOUTUBE_BREAKER_WINDOW_MS: durationMsBetween(1_000, 3_600_000).default(DEFAULT_CONFIG.breaker.windowMs),
  YOUTUBE_BREAKER_COOLDOWN_MS: durationMsBetween(0, 3_600_000).default(DEFAULT_CONFIG.breaker.cooldownMs),
  YOUTUBE_LADDER_RETIRE_AFTER: intBetween(1, 100).default(DEFAULT_CONFIG.ladder.retireAfter),
  YOUTUBE_LADDER_PROBE_INTERVAL_MS: durationMsBetween(1_000, DAY_MS).default(
    DEFAULT_CONFIG.ladder.probeIntervalMs,
  ),
  YOUTUBE_EGRESS_QUARANTINE_MS: durationMsBetween(0, DAY_MS).default(DEFAULT_CONFIG.egressQuarantineMs),
  YOUTUBE_VERSION_REFRESH_MS: durationMsBetween(0, 7 * DAY_MS).default(DEFAULT_CONFIG.versionRefreshMs),
  YOUTUBE_CLIENTS: jsonOf(ClientsJsonSchema).optional(),
  YOUTUBE_CLIENTS_FILE: z.string().trim().min(1, { error: 'must be a file path' }).optional(),
  YOUTUBE_CLIENTS_FILE_CHECK_MS: durationMsBetween(1_000, 3_600_000).default(
    DEFAULT_CONFIG.clientsFileCheckMs,
  ),
  YOUTUBE_PACING: z
    .enum(['auto', 'on', 'off'], { error: 'must be auto, on or off' })
    .default(DEFAULT_CONFIG.pacing.mode),
  YOUTUBE_PACING_PER_MINUTE: numberBetween(0.1, 1_000_000).default(DEFAULT_CONFIG.pacing.perMinute),
  YOUTUBE_PACING_BURST: intBetween(1, 1_000_000).default(DEFAULT_CONFIG.pacing.burst),
  YOUTUBE_PACING_TRANSLATED_COST: intBetween(1, 1_000).default(DEFAULT_CONFIG.pacing.translatedCost),
  YOUTUBE_PACING_MAX_WAIT_MS: durationMsBetween(0, 600_000).default(DEFAULT_CONFIG.pacing.maxWaitMs),
  CANARY_VIDEOS: z
    .string()
    .transform((raw, ctx) => {
      try {
        return parseCanaryVideos(raw);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message.replace(/^CANARY_VIDEOS:? /, '') });
        return z.NEVER;
      }
    })
    .optional(),
  CANARY_INTERVAL_MS: durationMsBetween(10_000, DAY_MS).default(DEFAULT_CONFIG.canary.intervalMs),
});

/** `https://host/path/` → `https://host/path` (responses' absolute URLs are re-based onto it). */
const withoutTrailingSlash = (raw: string) => {
  const u = new URL(raw);
  return u.origin + u.pathname.replace(/\/+$/, '');
};

/**
 * YOUTUBE_CLIENTS is JSON: `{"order": ["ANDROID","IOS"], "web": "WEB", "clients": {"ANDROID": {"version": "21.02.35"}}}`.
 * `order` is the caption ladder; `clients` entries are merged field by field over the defaults, so a version
 * bump is one field. Problems go to `issues` with the variable (and the path inside it) as key.
 */
function clientsVar(
  parsed: z.output<typeof ClientsJsonSchema> | undefined,
  poTokenProvider: boolean,
  issues: ConfigIssue[],
): ClientIdentities {
  const base = {
    clients: structuredClone(DEFAULT_CLIENTS),
    captionClients: [...DEFAULT_CAPTION_CLIENTS],
    webClient: 'WEB',
  };
  for (const [name, override] of Object.entries(parsed?.clients ?? {})) {
    const merged = {
      ...(base.clients[name] ?? { name, hasMicroformat: false }),
      ...override,
    } as InnertubeClient;
    if (
      typeof merged.version !== 'string' ||
      typeof merged.id !== 'number' ||
      typeof merged.userAgent !== 'string'
    ) {
      issues.push({
        key: `YOUTUBE_CLIENTS.clients.${name}`,
        message: 'needs id (number), version and userAgent (strings)',
      });
      continue;
    }
    base.clients[name] = merged;
  }
  if (parsed?.order) base.captionClients = parsed.order;
  if (parsed?.web) base.webClient = parsed.web;
  for (const name of [...base.captionClients, base.webClient]) {
    if (!base.clients[name])
      issues.push({ key: 'YOUTUBE_CLIENTS', message: `names an unknown client '${name}'` });
  }
  const gated = base.captionClients.filter((n) => base.clients[n] && isWebFamily(base.clients[n]));
  if (gated.length > 0 && !poTokenProvider) {
    issues.push({
      key: 'YOUTUBE_CLIENTS.order',
      message:
        `lists ${gated.join(', ')}, whose caption URLs need a PO token since Aug 2026: ` +
        'set YOUTUBE_PO_TOKEN_PROVIDER_URL or leave them out',
    });
  }
  // With a PO-token provider WEB's caption URLs work: it joins the ladder, last (it costs a token).
  if (poTokenProvider && !base.captionClients.includes(base.webClient)) {
    base.captionClients = [...base.captionClients, base.webClient];
  }
  return base;
}

/**
 * Client identities from JSON in the YOUTUBE_CLIENTS format (the identities file, read at start and
 * again while running): the identities, or every problem found, each named after `source`.
 */
export function parseClientIdentities(
  raw: string,
  poTokenProvider: boolean,
  source: string,
): { identities: ClientIdentities; errors: string[] } {
  const issues: ConfigIssue[] = [];
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    issues.push({ key: 'YOUTUBE_CLIENTS', message: 'must be JSON' });
  }
  let parsed: z.output<typeof ClientsJsonSchema> | undefined;
  if (issues.length === 0) {
    const result = ClientsJsonSchema.safeParse(json);
    if (result.success) parsed = result.data;
    else {
      for (const i of result.error.issues) {
        issues.push({ key: ['YOUTUBE_CLIENTS', ...i.path.map(String)].join('.'), message: i.message });
      }
    }
  }
  const identities = clientsVar(parsed, poTokenProvider, issues);
  const errors = issues.map((i) => `${i.key.replace(/^YOUTUBE_CLIENTS/, source)} ${i.message}`);
  return { identities, errors };
}

/** The largest identities file read: a few clients are a few KiB. */
export const MAX_CLIENTS_FILE_BYTES = 256 * 1024;

/** The identities file at start: a missing, oversized or invalid file refuses to start. */
function clientsFileVar(
  path: string,
  poTokenProvider: boolean,
  issues: ConfigIssue[],
): ClientIdentities | undefined {
  const source = `YOUTUBE_CLIENTS_FILE ${path}`;
  let raw: string;
  try {
    if (statSync(path).size > MAX_CLIENTS_FILE_BYTES) {
      issues.push({ key: source, message: `is larger than ${MAX_CLIENTS_FILE_BYTES} bytes` });
      return undefined;
    }
    raw = readFileSync(path, 'utf8');
  } catch (err) {
    issues.push({
      key: source,
      message: `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    });
    return undefined;
  }
  const { identities, errors } = parseClientIdentities(raw, poTokenProvider, source);
  for (const error of errors) issues.push({ key: '', message: error });
  return errors.length === 0 ? identities : undefined;
}

/** The issues of a ConfigError, or rethrows anything else. */
function issuesOf(err: unknown): ConfigIssue[] {
  if (err instanceof ConfigError) return [...err.issues];
  throw err;
}

/**
 * Reads the YOUTUBE_* variables; every problem is reported at once in one INVALID_REQUEST error
 * whose `details.errors` are "VARIABLE message" sentences (service-kit's `configIssuesOf` reads them).
 */
export function loadYouTubeConfig(env: Env = process.env): YouTubeClientConfig {
  const issues: ConfigIssue[] = [];
  let e: z.output<typeof YouTubeEnvSchema>;
  try {
    e = loadConfig(YouTubeEnvSchema, env);
  } catch (err) {
    issues.push(...issuesOf(err));
    // The variables that did parse, so YOUTUBE_CLIENTS's own rules are reported in the same go.
    e = loadConfig(YouTubeEnvSchema.partial(), {
      YOUTUBE_CLIENTS:
        env.YOUTUBE_CLIENTS && !issues.some((i) => i.key.startsWith('YOUTUBE_CLIENTS'))
          ? env.YOUTUBE_CLIENTS
          : undefined,
    }) as z.output<typeof YouTubeEnvSchema>;
  }
  const providerSet = httpUrl.safeParse(env.YOUTUBE_PO_TOKEN_PROVIDER_URL ?? '').success;
  const poTokenProviderUrl = e.YOUTUBE_PO_TOKEN_PROVIDER_URL
    ? withoutTrailingSlash(e.YOUTUBE_PO_TOKEN_PROVIDER_URL)
    : undefined;
  const d = DEFAULT_CONFIG;
  const maxBody = e.YOUTUBE_MAX_BODY_BYTES;
  const config: YouTubeClientConfig = {
    ...d,
    baseUrl: e.YOUTUBE_BASE_URL ? withoutTrailingSlash(e.YOUTUBE_BASE_URL) : d.baseUrl,
    timeoutMs: e.YOUTUBE_TIMEOUT_MS,
    retries: e.YOUTUBE_RETRIES,
    retryBaseMs: e.YOUTUBE_RETRY_BASE_MS,
    proxies: e.YOUTUBE_PROXIES ?? [],
    blockedRetries: e.YOUTUBE_BLOCKED_RETRIES,
    poTokenProviderUrl,
    sessions: {
      size: e.YOUTUBE_SESSIONS,
      rotateEvery: e.YOUTUBE_SESSION_ROTATE_EVERY,
      bootstrap: e.YOUTUBE_SESSION_BOOTSTRAP,
    },
    breaker: {
      minBlocks: e.YOUTUBE_BREAKER_MIN_BLOCKS,
      ratio: e.YOUTUBE_BREAKER_RATIO,
      windowMs: e.YOUTUBE_BREAKER_WINDOW_MS,
      cooldownMs: e.YOUTUBE_BREAKER_COOLDOWN_MS,
    },
    ladder: {
      retireAfter: e.YOUTUBE_LADDER_RETIRE_AFTER,
      probeIntervalMs: e.YOUTUBE_LADDER_PROBE_INTERVAL_MS,
    },
    egressQuarantineMs: e.YOUTUBE_EGRESS_QUARANTINE_MS,
    pacing: {
      mode: e.YOUTUBE_PACING ?? d.pacing.mode,
      perMinute: e.YOUTUBE_PACING_PER_MINUTE ?? d.pacing.perMinute,
      burst: e.YOUTUBE_PACING_BURST ?? d.pacing.burst,
      translatedCost: e.YOUTUBE_PACING_TRANSLATED_COST ?? d.pacing.translatedCost,
      maxWaitMs: e.YOUTUBE_PACING_MAX_WAIT_MS ?? d.pacing.maxWaitMs,
    },
    clientsFile: e.YOUTUBE_CLIENTS_FILE,
    clientsFileCheckMs: e.YOUTUBE_CLIENTS_FILE_CHECK_MS ?? d.clientsFileCheckMs,
    canary: {
      videos: e.CANARY_VIDEOS ?? [],
      intervalMs: e.CANARY_INTERVAL_MS ?? d.canary.intervalMs,
    },
    versionRefreshMs: e.YOUTUBE_VERSION_REFRESH_MS,
    maxBodyBytes: maxBody
      ? (Object.fromEntries(Object.keys(d.maxBodyBytes).map((k) => [k, maxBody])) as Record<
          UpstreamEndpoint,
          number
        >)
      : d.maxBodyBytes,
    ...((e.YOUTUBE_CLIENTS_FILE ? clientsFileVar(e.YOUTUBE_CLIENTS_FILE, providerSet, issues) : undefined) ??
      clientsVar(e.YOUTUBE_CLIENTS, providerSet, issues)),
  };
  if (e.YOUTUBE_CLIENTS_FILE && env.YOUTUBE_CLIENTS?.trim()) {
    issues.push({
      key: 'YOUTUBE_CLIENTS_FILE',
      message:
        'and YOUTUBE_CLIENTS are both set: set YOUTUBE_CLIENTS or YOUTUBE_CLIENTS_FILE, not both (the file replaces the variable)',
    });
  }
  if (issues.length > 0) {
    const errors = issues.map((issue) => (issue.key ? `${issue.key} ${issue.message}` : issue.message));
    throw Errors.invalidRequest(`Invalid YouTube client configuration: ${errors.join('; ')}`, { errors });
  }
  return config;
}

import { readFileSync, statSync } from 'node:fs';
import { parseCanaryVideos } from './canary/videos.ts';
import { Errors } from '@subx/errors';
import { DEFAULT_CAPTION_CLIENTS, DEFAULT_CLIENTS, isWebFamily, type InnertubeClient } from './clients.ts';
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

export interface PacingConfig {
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
 * ~1.5 MB, watch-next ~1 MB, a 100-video browse page ~0.8 MB, a 3-hour json3 caption body 1.3 MB.
 */
export const DEFAULT_MAX_BODY_BYTES: Record<UpstreamEndpoint, number> = {
  player: 8 * MiB,
  next: 8 * MiB,
  browse: 8 * MiB,
  resolve_url: 1 * MiB,
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

function numVar(
  env: Env,
  name: string,
  def: number,
  min: number,
  max: number,
  errors: string[],
  integer = true,
): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return def;
  const n = Number(raw);
  if (
    !/^\s*[\d.]+\s*$/.test(raw) ||
    !Number.isFinite(n) ||
    (integer && !Number.isInteger(n)) ||
    n < min ||
    n > max
  ) {
    errors.push(
      `${name} must be ${integer ? 'an integer' : 'a number'} between ${min} and ${max} (got '${raw}')`,
    );
    return def;
  }
  return n;
}

function httpUrl(raw: string): URL | undefined {
  try {
    const u = new URL(raw);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u : undefined;
  } catch {
    return undefined;
  }
}

/**
 * YOUTUBE_CLIENTS is JSON: `{"order": ["ANDROID","IOS"], "web": "WEB", "clients": {"ANDROID": {"version": "21.02.35"}}}`.
 * `order` is the caption ladder; `clients` entries are merged field by field over the defaults, so a version
 * bump is one field.
 */
function clientsVar(
  raw: string | undefined,
  poTokenProvider: boolean,
  errors: string[],
  source = 'YOUTUBE_CLIENTS',
): ClientIdentities {
  const base = {
    clients: structuredClone(DEFAULT_CLIENTS),
    captionClients: [...DEFAULT_CAPTION_CLIENTS],
    webClient: 'WEB',
  };
  if (raw !== undefined && raw.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      errors.push(`${source} must be JSON`);
      return base;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      errors.push(`${source} must be a JSON object with optional order, web and clients`);
      return base;
    }
    const p = parsed as { order?: unknown; web?: unknown; clients?: unknown };
    if (p.clients !== undefined) {
      if (typeof p.clients !== 'object' || p.clients === null)
        errors.push(`${source}.clients must be an object`);
      else {
        for (const [name, override] of Object.entries(p.clients as Record<string, unknown>)) {
          const merged = {
            ...(base.clients[name] ?? { name, hasMicroformat: false }),
            ...(override as object),
          } as InnertubeClient;
          if (
            typeof merged.version !== 'string' ||
            typeof merged.id !== 'number' ||
            typeof merged.userAgent !== 'string'
          ) {
            errors.push(`${source}.clients.${name} needs id (number), version and userAgent (strings)`);
            continue;
          }
          base.clients[name] = merged;
        }
      }
    }
    if (p.order !== undefined) {
      if (!Array.isArray(p.order) || p.order.length === 0 || !p.order.every((c) => typeof c === 'string')) {
        errors.push(`${source}.order must be a non-empty array of client names`);
      } else base.captionClients = p.order as string[];
    }
    if (p.web !== undefined) {
      if (typeof p.web !== 'string') errors.push(`${source}.web must be a client name`);
      else base.webClient = p.web;
    }
  }
  for (const name of [...base.captionClients, base.webClient]) {
    if (!base.clients[name]) errors.push(`${source} names an unknown client '${name}'`);
  }
  const gated = base.captionClients.filter((n) => base.clients[n] && isWebFamily(base.clients[n]));
  if (gated.length > 0 && !poTokenProvider) {
    errors.push(
      `${source}.order lists ${gated.join(', ')}, whose caption URLs need a PO token since Aug 2026: ` +
        'set YOUTUBE_PO_TOKEN_PROVIDER_URL or leave them out',
    );
  }
  // With a PO-token provider WEB's caption URLs work: it joins the ladder, last (it costs a token).
  if (poTokenProvider && !base.captionClients.includes(base.webClient)) {
    base.captionClients = [...base.captionClients, base.webClient];
  }
  return base;
}

/**
 * Client identities from JSON in the YOUTUBE_CLIENTS format (for the identities file, read again
 * while running): the identities, or every problem found, each naming `source`.
 */
export function parseClientIdentities(
  raw: string,
  poTokenProvider: boolean,
  source: string,
): { identities: ClientIdentities; errors: string[] } {
  const errors: string[] = [];
  const identities = clientsVar(raw, poTokenProvider, errors, source);
  return { identities, errors };
}

/** The largest identities file read: a few clients are a few KiB. */
export const MAX_CLIENTS_FILE_BYTES = 256 * 1024;

function clientsFileVar(
  path: string,
  poTokenProvider: boolean,
  errors: string[],
): ClientIdentities | undefined {
  let raw: string;
  try {
    if (statSync(path).size > MAX_CLIENTS_FILE_BYTES) {
      errors.push(`YOUTUBE_CLIENTS_FILE ${path} is larger than ${MAX_CLIENTS_FILE_BYTES} bytes`);
      return undefined;
    }
    raw = readFileSync(path, 'utf8');
  } catch (err) {
    errors.push(
      `YOUTUBE_CLIENTS_FILE ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
    return undefined;
  }
  return clientsVar(raw, poTokenProvider, errors, `YOUTUBE_CLIENTS_FILE ${path}`);
}

/** Reads the YOUTUBE_* variables; every problem is reported at once in one INVALID_REQUEST error. */
export function loadYouTubeConfig(env: Env = process.env): YouTubeClientConfig {
  const errors: string[] = [];
  let baseUrl = DEFAULT_CONFIG.baseUrl;
  const rawBase = env.YOUTUBE_BASE_URL?.trim();
  if (rawBase) {
    const u = httpUrl(rawBase);
    if (u) baseUrl = u.origin + u.pathname.replace(/\/+$/, '');
    else errors.push(`YOUTUBE_BASE_URL must be an http(s) URL (got '${rawBase}')`);
  }
  const proxies: string[] = [];
  for (const p of (env.YOUTUBE_PROXIES ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    // never echo the value: proxy URLs carry credentials
    if (httpUrl(p)) proxies.push(p);
    else errors.push(`YOUTUBE_PROXIES entry ${proxies.length + 1} is not an http(s) URL`);
  }
  let poTokenProviderUrl: string | undefined;
  const rawPot = env.YOUTUBE_PO_TOKEN_PROVIDER_URL?.trim();
  if (rawPot) {
    const u = httpUrl(rawPot);
    if (u) poTokenProviderUrl = u.origin + u.pathname.replace(/\/+$/, '');
    else errors.push('YOUTUBE_PO_TOKEN_PROVIDER_URL must be an http(s) URL');
  }
  const bootstrap = env.YOUTUBE_SESSION_BOOTSTRAP?.trim() || DEFAULT_CONFIG.sessions.bootstrap;
  if (bootstrap !== 'visitor_id' && bootstrap !== 'sw_js_data') {
    errors.push(`YOUTUBE_SESSION_BOOTSTRAP must be visitor_id or sw_js_data (got '${bootstrap}')`);
  }
  const maxBody = env.YOUTUBE_MAX_BODY_BYTES?.trim()
    ? numVar(env, 'YOUTUBE_MAX_BODY_BYTES', 0, 1024, 256 * MiB, errors)
    : 0;
  const d = DEFAULT_CONFIG;
  const clientsFile = env.YOUTUBE_CLIENTS_FILE?.trim() || undefined;
  if (clientsFile && env.YOUTUBE_CLIENTS?.trim()) {
    errors.push('set YOUTUBE_CLIENTS or YOUTUBE_CLIENTS_FILE, not both (the file replaces the variable)');
  }
  let canaryVideos: YouTubeClientConfig['canary']['videos'] = [];
  try {
    canaryVideos = parseCanaryVideos(env.CANARY_VIDEOS);
  } catch (err) {
    errors.push((err as Error).message);
  }
  const pacingMode = env.YOUTUBE_PACING?.trim() || d.pacing.mode;
  if (pacingMode !== 'auto' && pacingMode !== 'on' && pacingMode !== 'off') {
    errors.push(`YOUTUBE_PACING must be auto, on or off (got '${pacingMode}')`);
  }
  const config: YouTubeClientConfig = {
    ...d,
    baseUrl,
    timeoutMs: numVar(env, 'YOUTUBE_TIMEOUT_MS', d.timeoutMs, 100, 120_000, errors),
    retries: numVar(env, 'YOUTUBE_RETRIES', d.retries, 0, 10, errors),
    retryBaseMs: numVar(env, 'YOUTUBE_RETRY_BASE_MS', d.retryBaseMs, 0, 60_000, errors),
    proxies,
    blockedRetries: numVar(env, 'YOUTUBE_BLOCKED_RETRIES', d.blockedRetries, 0, 10, errors),
    poTokenProviderUrl,
    sessions: {
      size: numVar(env, 'YOUTUBE_SESSIONS', d.sessions.size, 1, 1000, errors),
      rotateEvery: numVar(env, 'YOUTUBE_SESSION_ROTATE_EVERY', d.sessions.rotateEvery, 1, 100_000, errors),
      bootstrap: bootstrap === 'sw_js_data' ? 'sw_js_data' : 'visitor_id',
    },
    breaker: {
      minBlocks: numVar(env, 'YOUTUBE_BREAKER_MIN_BLOCKS', d.breaker.minBlocks, 1, 1_000_000, errors),
      ratio: numVar(env, 'YOUTUBE_BREAKER_RATIO', d.breaker.ratio, 0, 1, errors, false),
      windowMs: numVar(env, 'YOUTUBE_BREAKER_WINDOW_MS', d.breaker.windowMs, 1_000, 3_600_000, errors),
      cooldownMs: numVar(env, 'YOUTUBE_BREAKER_COOLDOWN_MS', d.breaker.cooldownMs, 0, 3_600_000, errors),
    },
    ladder: {
      retireAfter: numVar(env, 'YOUTUBE_LADDER_RETIRE_AFTER', d.ladder.retireAfter, 1, 100, errors),
      probeIntervalMs: numVar(
        env,
        'YOUTUBE_LADDER_PROBE_INTERVAL_MS',
        d.ladder.probeIntervalMs,
        1_000,
        86_400_000,
        errors,
      ),
    },
    egressQuarantineMs: numVar(
      env,
      'YOUTUBE_EGRESS_QUARANTINE_MS',
      d.egressQuarantineMs,
      0,
      86_400_000,
      errors,
    ),
    pacing: {
      mode: pacingMode === 'on' || pacingMode === 'off' ? pacingMode : 'auto',
      perMinute: numVar(env, 'YOUTUBE_PACING_PER_MINUTE', d.pacing.perMinute, 0.1, 1_000_000, errors, false),
      burst: numVar(env, 'YOUTUBE_PACING_BURST', d.pacing.burst, 1, 1_000_000, errors),
      translatedCost: numVar(
        env,
        'YOUTUBE_PACING_TRANSLATED_COST',
        d.pacing.translatedCost,
        1,
        1_000,
        errors,
      ),
      maxWaitMs: numVar(env, 'YOUTUBE_PACING_MAX_WAIT_MS', d.pacing.maxWaitMs, 0, 600_000, errors),
    },
    versionRefreshMs: numVar(
      env,
      'YOUTUBE_VERSION_REFRESH_MS',
      d.versionRefreshMs,
      0,
      7 * 86_400_000,
      errors,
    ),
    maxBodyBytes: maxBody
      ? (Object.fromEntries(Object.keys(d.maxBodyBytes).map((k) => [k, maxBody])) as Record<
          UpstreamEndpoint,
          number
        >)
      : d.maxBodyBytes,
    canary: {
      videos: canaryVideos,
      intervalMs: numVar(env, 'CANARY_INTERVAL_MS', d.canary.intervalMs, 10_000, 86_400_000, errors),
    },
    clientsFile,
    clientsFileCheckMs: numVar(
      env,
      'YOUTUBE_CLIENTS_FILE_CHECK_MS',
      d.clientsFileCheckMs,
      1_000,
      3_600_000,
      errors,
    ),
    ...((clientsFile ? clientsFileVar(clientsFile, poTokenProviderUrl !== undefined, errors) : undefined) ??
      clientsVar(env.YOUTUBE_CLIENTS, poTokenProviderUrl !== undefined, errors)),
  };
  if (errors.length > 0) {
    throw Errors.invalidRequest(`Invalid YouTube client configuration: ${errors.join('; ')}`, { errors });
  }
  return config;
}

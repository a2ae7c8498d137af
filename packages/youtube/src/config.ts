import { Errors } from '@subx/errors';
import { DEFAULT_CLIENTS, DEFAULT_PLAYER_CLIENTS, type InnertubeClient } from './clients.ts';

export interface YouTubeClientConfig {
  /** Every request goes here; absolute platform URLs in responses are re-based onto it. */
  baseUrl: string;
  /** Per upstream request. */
  timeoutMs: number;
  /** Retries on network errors and 5xx (not on 4xx, blocks or timeouts). */
  retries: number;
  /** Base of the jittered exponential backoff. */
  retryBaseMs: number;
  /** HTTP(S) proxy URLs; rotated when the platform blocks us. */
  proxies: string[];
  clients: Record<string, InnertubeClient>;
  /** Order in which /player is tried. */
  playerClients: string[];
  /** Client for /next and /browse. */
  webClient: string;
  hl: string;
  gl: string;
  /** Concurrent reply-page requests while downloading comments. */
  commentConcurrency: number;
}

export const DEFAULT_CONFIG: YouTubeClientConfig = {
  baseUrl: 'https://www.youtube.com',
  timeoutMs: 10_000,
  retries: 2,
  retryBaseMs: 250,
  proxies: [],
  clients: DEFAULT_CLIENTS,
  playerClients: DEFAULT_PLAYER_CLIENTS,
  webClient: 'WEB',
  hl: 'en',
  gl: 'US',
  commentConcurrency: 4,
};

function intVar(
  env: Record<string, string | undefined>,
  name: string,
  def: number,
  min: number,
  max: number,
  errors: string[],
): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    errors.push(`${name} must be an integer between ${min} and ${max} (got '${raw}')`);
    return def;
  }
  return n;
}

/**
 * YOUTUBE_CLIENTS is JSON: `{"order": ["ANDROID","WEB"], "web": "WEB", "clients": {"ANDROID": {"version": "21.02.35"}}}`.
 * `clients` entries are merged field by field over the defaults, so a version bump is one field.
 */
function clientsVar(
  raw: string | undefined,
  errors: string[],
): Pick<YouTubeClientConfig, 'clients' | 'playerClients' | 'webClient'> {
  const base = {
    clients: structuredClone(DEFAULT_CLIENTS),
    playerClients: [...DEFAULT_PLAYER_CLIENTS],
    webClient: 'WEB',
  };
  if (raw === undefined || raw.trim() === '') return base;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    errors.push('YOUTUBE_CLIENTS must be JSON');
    return base;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    errors.push('YOUTUBE_CLIENTS must be a JSON object with optional order, web and clients');
    return base;
  }
  const p = parsed as { order?: unknown; web?: unknown; clients?: unknown };
  if (p.clients !== undefined) {
    if (typeof p.clients !== 'object' || p.clients === null)
      errors.push('YOUTUBE_CLIENTS.clients must be an object');
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
          errors.push(`YOUTUBE_CLIENTS.clients.${name} needs id (number), version and userAgent (strings)`);
          continue;
        }
        base.clients[name] = merged;
      }
    }
  }
  if (p.order !== undefined) {
    if (!Array.isArray(p.order) || p.order.length === 0 || !p.order.every((c) => typeof c === 'string')) {
      errors.push('YOUTUBE_CLIENTS.order must be a non-empty array of client names');
    } else base.playerClients = p.order as string[];
  }
  if (p.web !== undefined) {
    if (typeof p.web !== 'string') errors.push('YOUTUBE_CLIENTS.web must be a client name');
    else base.webClient = p.web;
  }
  for (const name of [...base.playerClients, base.webClient]) {
    if (!base.clients[name]) errors.push(`YOUTUBE_CLIENTS names an unknown client '${name}'`);
  }
  return base;
}

/** Reads the YOUTUBE_* variables; every problem is reported at once in one INVALID_REQUEST error. */
export function loadYouTubeConfig(
  env: Record<string, string | undefined> = process.env,
): YouTubeClientConfig {
  const errors: string[] = [];
  let baseUrl = DEFAULT_CONFIG.baseUrl;
  const rawBase = env.YOUTUBE_BASE_URL?.trim();
  if (rawBase) {
    try {
      const u = new URL(rawBase);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('protocol');
      baseUrl = u.origin + u.pathname.replace(/\/+$/, '');
    } catch {
      errors.push(`YOUTUBE_BASE_URL must be an http(s) URL (got '${rawBase}')`);
    }
  }
  const proxies: string[] = [];
  for (const p of (env.YOUTUBE_PROXIES ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    try {
      const u = new URL(p);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('protocol');
      proxies.push(p);
    } catch {
      // never echo the value: proxy URLs carry credentials
      errors.push(`YOUTUBE_PROXIES entry ${proxies.length + 1} is not an http(s) URL`);
    }
  }
  const config: YouTubeClientConfig = {
    ...DEFAULT_CONFIG,
    baseUrl,
    timeoutMs: intVar(env, 'YOUTUBE_TIMEOUT_MS', DEFAULT_CONFIG.timeoutMs, 100, 120_000, errors),
    retries: intVar(env, 'YOUTUBE_RETRIES', DEFAULT_CONFIG.retries, 0, 10, errors),
    retryBaseMs: intVar(env, 'YOUTUBE_RETRY_BASE_MS', DEFAULT_CONFIG.retryBaseMs, 0, 60_000, errors),
    proxies,
    ...clientsVar(env.YOUTUBE_CLIENTS, errors),
  };
  if (errors.length > 0) {
    throw Errors.invalidRequest(`Invalid YouTube client configuration: ${errors.join('; ')}`, { errors });
  }
  return config;
}

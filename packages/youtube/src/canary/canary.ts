import { Errors, isAppError } from '@subx/errors';
import { CircuitBreaker } from '../breaker.ts';
import { candidateClients } from '../clients.ts';
import { YouTubeClient } from '../client.ts';
import type { YouTubeClientConfig } from '../config.ts';
import type { AdaptiveLadder, LadderVerdict } from '../ladder/adaptive-ladder.ts';
import type { UpstreamObserver } from '../observer.ts';
import type { FetchLike, Logger } from '../types.ts';
import type { CanaryVideo } from './videos.ts';

/**
 * Canaries: a dead client identity or egress shows on the dashboard before users see it. Every run
 * fetches one known video through every client of the caption ladder and every egress, each probe
 * through a client that knows only that identity and that egress, so a probe's outcome is about
 * them alone. Their upstream calls report to the service's own observer (the same
 * `subx_upstream_requests_total`, by client) and go through the same per-address pacing budget as
 * user traffic; each probe's result also goes to `onProbe` (the `subx_canary_*` metrics).
 *
 * Candidate identities (catalogue entries with `canary: true`, e.g. TV_SAMSUNG) are probed the same
 * way after the ladder's clients, and only here: each probe's verdict goes to the service's own
 * `ladder`, which adopts a candidate after enough successes in a row (a caption body that answered)
 * and demotes it at the first failure (adaptive-ladder.ts). Without canaries no candidate is adopted.
 *
 * Off unless `CANARY_VIDEOS` is set (it spends the platform's patience on our own traffic). The
 * probes get their own circuit breaker: they must keep probing while user traffic waits out an
 * open breaker, and their failures must not open it for users.
 */

export interface CanaryProbe {
  client: string;
  /** Index into YOUTUBE_PROXIES; 'direct' without proxies. */
  egress: string;
  videoId: string;
  /** 'ok', or the error code the probe ended with (UPSTREAM_BLOCKED, UPSTREAM_ERROR, ...). */
  outcome: string;
  /** The error's reason where it has one (bot_check, paced, ...). */
  reason?: string;
  latencyMs: number;
  /** Requests the probe sent to the platform. */
  upstreamRequests: number;
  /** A candidate identity's probe (its verdict decides whether users are served by it). */
  candidate?: true;
  /**
   * What the probe fetched when not captions: `audio` for an identity asked for the audio of videos
   * the ladder answers unplayable (IOS_PRODUCER): its first piece of audio.
   */
  probes?: 'audio';
}

export interface CanaryOptions {
  /** The configuration in use (read at every run: identities can change while running). */
  config: () => YouTubeClientConfig;
  videos: readonly CanaryVideo[];
  intervalMs: number;
  observer?: UpstreamObserver;
  logger?: Logger;
  fetch?: FetchLike;
  onProbe?: (probe: CanaryProbe) => void;
  /** The service's adaptive ladder: told every candidate probe's verdict (adoption, demotion). */
  ladder?: Pick<AdaptiveLadder, 'record'>;
}

export class Canary {
  readonly #options: CanaryOptions;
  readonly #probers = new Map<string, YouTubeClient>();
  #timer: NodeJS.Timeout | undefined;
  #run = 0;
  #running: Promise<CanaryProbe[]> | undefined;

  constructor(options: CanaryOptions) {
    if (options.videos.length === 0) throw new Error('Canary: no videos to probe with');
    this.#options = options;
  }

  /** A first run at once (a fresh deploy shows its clients' state within seconds), then on the timer. */
  start(): void {
    if (this.#timer) return;
    void this.runOnce().catch(() => undefined);
    this.#timer = setInterval(() => void this.runOnce().catch(() => undefined), this.#options.intervalMs);
    this.#timer.unref();
  }

  /** One probe per client of the ladder and egress, on the run's video; runs never overlap. */
  runOnce(): Promise<CanaryProbe[]> {
    this.#running ??= this.#probeAll().finally(() => (this.#running = undefined));
    return this.#running;
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running?.catch(() => undefined);
    await Promise.all([...this.#probers.values()].map((c) => c.close()));
    this.#probers.clear();
  }

  async #probeAll(): Promise<CanaryProbe[]> {
    const config = this.#options.config();
    const video = this.#options.videos[this.#run++ % this.#options.videos.length]!;
    const egresses = config.proxies.length > 0 ? config.proxies.map((_, i) => i) : [undefined];
    const probes: CanaryProbe[] = [];
    // One at a time: the canary is background traffic and must stay small next to users'.
    for (const client of config.captionClients) {
      for (const egress of egresses) probes.push(await this.#probe(config, client, egress, video));
    }
    for (const client of candidateClients(config.clients, config.captionClients)) {
      for (const egress of egresses) probes.push(await this.#probe(config, client, egress, video));
    }
    const failed = probes.filter((p) => p.outcome !== 'ok');
    this.#options.logger?.[failed.length > 0 ? 'warn' : 'debug'](
      {
        video: video.id,
        probes: probes.length,
        failed: failed.map((p) => `${p.client}@${p.egress}: ${p.outcome}`),
      },
      failed.length > 0 ? 'canary: some probes failed' : 'canary: every probe ok',
    );
    return probes;
  }

  async #probe(
    config: YouTubeClientConfig,
    client: string,
    egress: number | undefined,
    video: CanaryVideo,
  ): Promise<CanaryProbe> {
    const prober = this.#prober(config, client, egress);
    const calls = prober.upstreamCalls;
    const started = performance.now();
    let probe: CanaryProbe;
    const audio = config.clients[client]?.fallbackForUnplayable === true;
    try {
      if (audio) await firstAudioPiece(prober, video.id);
      else await prober.getTranscript({ videoId: video.id, language: video.language, include: [] });
      probe = {
        client,
        egress: egressLabel(egress),
        videoId: video.id,
        outcome: 'ok',
        latencyMs: 0,
        upstreamRequests: 0,
      };
    } catch (err) {
      probe = {
        client,
        egress: egressLabel(egress),
        videoId: video.id,
        outcome: isAppError(err) ? err.code : 'INTERNAL_ERROR',
        ...(isAppError(err) && err.reason ? { reason: err.reason } : {}),
        latencyMs: 0,
        upstreamRequests: 0,
      };
    }
    probe.latencyMs = Math.round(performance.now() - started);
    probe.upstreamRequests = prober.upstreamCalls - calls;
    const identity = config.clients[client];
    if (audio) probe.probes = 'audio';
    if (identity && !config.captionClients.includes(client)) {
      probe.candidate = true;
      this.#options.ladder?.record(identity, candidateVerdict(probe));
    }
    try {
      this.#options.onProbe?.(probe);
    } catch {
      // metrics are best effort
    }
    return probe;
  }

  /** A client that knows one identity and one egress; rebuilt when that identity's version changes. */
  #prober(config: YouTubeClientConfig, client: string, egress: number | undefined): YouTubeClient {
    const identity = config.clients[client];
    const key = `${client}@${identity?.version}|${egressLabel(egress)}`;
    let prober = this.#probers.get(key);
    if (!prober) {
      prober = YouTubeClient.create(
        {
          ...config,
          captionClients: [client],
          proxies: egress === undefined ? [] : [config.proxies[egress]!],
          clientsFile: undefined,
          sessions: { ...config.sessions, size: 1 },
        },
        {
          breaker: new CircuitBreaker(config.breaker),
          ...(this.#options.observer ? { observer: this.#options.observer } : {}),
          ...(this.#options.logger ? { logger: this.#options.logger } : {}),
          ...(this.#options.fetch ? { fetch: this.#options.fetch } : {}),
        },
      );
      this.#probers.set(key, prober);
    }
    return prober;
  }
}

/**
 * The first piece of the video's audio through the prober's one identity: proof that it lists an
 * audio-only format with a plain URL and that the URL answers. The rest is never fetched.
 */
async function firstAudioPiece(prober: YouTubeClient, videoId: string): Promise<void> {
  // the size cap is for whole downloads; a probe reads one piece of any video
  const audio = await prober.getAudio({ videoId, maxBytes: Number.MAX_SAFE_INTEGER });
  for await (const piece of audio.pieces) if (piece.byteLength > 0) return;
  throw Errors.upstreamError('The audio answered no bytes.');
}

/**
 * What a candidate's probe says about the identity: a caption body (or, for an audio identity, a
 * piece of audio) fetched proves it; no captions or audio, an
 * empty or unreadable body, a refusal or an unavailable video (the canary video has captions in its
 * language) count against it; trouble of the egress or the network (blocks, 429s, timeouts) does not.
 */
function candidateVerdict(probe: CanaryProbe): LadderVerdict {
  if (probe.outcome === 'ok') return 'ok';
  if (probe.outcome === 'UPSTREAM_BLOCKED')
    return probe.reason === 'empty_caption_body' || probe.reason === 'po_token' ? 'client_failed' : 'neutral';
  return [
    'UPSTREAM_ERROR',
    'NO_SUBTITLES',
    'LANGUAGE_NOT_AVAILABLE',
    'VIDEO_UNAVAILABLE',
    'VIDEO_NOT_FOUND',
  ].includes(probe.outcome)
    ? 'client_failed'
    : 'neutral';
}

const egressLabel = (egress: number | undefined): string =>
  egress === undefined ? 'direct' : String(egress);

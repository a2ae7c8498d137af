/**
 * The YouTube client, the package's public entry: it builds the parts (transport with the circuit
 * breaker, InnerTube plumbing in innertube.ts, the caption ladder in ladder/player-ladder.ts, PO
 * tokens) and hands each call to its operation module in operations/.
 */
import type { AppError } from '@subx/errors';
import { sharedBreaker, type CircuitBreaker } from './breaker.ts';
import type { ClientIdentities, YouTubeClientConfig } from './config.ts';
import { ClientsFile, readInitialIdentities } from './identities/clients-file.ts';
import { Innertube } from './innertube.ts';
import { AdaptiveLadder } from './ladder/adaptive-ladder.ts';
import { PlayerLadder } from './ladder/player-ladder.ts';
import { UpstreamStats, type UpstreamCall, type UpstreamObserver } from './observer.ts';
import type { ChannelListing, ChannelListingRequest } from './channel/list.ts';
import type { ListingOptions } from './listing/collect.ts';
import type { PlaylistListing } from './listing/playlist.ts';
import { getComments } from './operations/comments.ts';
import type { YouTubeOperations } from './operations/context.ts';
import { getMetadata } from './operations/metadata.ts';
import { listChannelVideos, listPlaylistVideos } from './operations/listings.ts';
import {
  search,
  searchVideos,
  type SearchRequest,
  type SearchVideos,
  type SearchVideosRequest,
} from './operations/search.ts';
import type { SearchPage } from './search/parse.ts';
import { getPlaylist } from './operations/playlists.ts';
import { getTranscript } from './operations/transcripts.ts';
import { getAudio, type AudioRequest, type VideoAudio } from './operations/audio.ts';
import { validate } from './operations/validation.ts';
import { ClientPoTokens } from './po-tokens/client-tokens.ts';
import type { PoTokenHealth } from './po-tokens/provider.ts';
import type { Session } from './sessions.ts';
import { Transport } from './transport.ts';
import type {
  Clock,
  CommentSort,
  CommentsResult,
  FetchLike,
  Logger,
  MetadataField,
  Playlist,
  SegmentTranslator,
  Transcript,
  TranscriptRequest,
  Validation,
  VideoMetadata,
} from './types.ts';

export { MAX_COMMENTS } from './operations/comments.ts';

export interface YouTubeClientDeps {
  fetch?: FetchLike;
  clock?: Clock;
  logger?: Logger;
  /** Backoff sleep; tests pass a no-op. */
  sleep?: (ms: number) => Promise<void>;
  /** Told every upstream call's outcome and the circuit breaker's state (metrics plug in here). */
  observer?: UpstreamObserver;
  /** Defaults to the process-wide breaker of the base URL (shared by every client of the process). */
  breaker?: CircuitBreaker;
  /** The adaptive caption ladder (default: one per client, on `clock`). */
  ladder?: AdaptiveLadder;
  /** Translates caption segments when the platform refuses a translation (a model); none by default. */
  translator?: SegmentTranslator;
}

export class YouTubeClient {
  readonly #transport: Transport;
  readonly #ladder: AdaptiveLadder;
  readonly #breaker: CircuitBreaker;
  readonly #unsubscribeBreaker: () => void;
  readonly #operations: YouTubeOperations;
  readonly #clientsFile: ClientsFile | undefined;
  /** Running totals of upstream outcomes (client, endpoint, outcome). */
  readonly upstreamStats = new UpstreamStats();

  private constructor(config: YouTubeClientConfig, deps: YouTubeClientDeps) {
    const clock = deps.clock ?? { now: () => Date.now() };
    const logger = deps.logger;
    this.#ladder = deps.ladder ?? new AdaptiveLadder({ clock, ...config.ladder });
    this.#clientsFile = config.clientsFile
      ? new ClientsFile(
          {
            path: config.clientsFile,
            intervalMs: config.clientsFileCheckMs,
            poTokenProvider: config.poTokenProviderUrl !== undefined,
            apply: (identities) => this.useIdentities(identities),
            logger: deps.logger,
          },
          readInitialIdentities(config.clientsFile),
        )
      : undefined;
    const stats = this.upstreamStats;
    const external = deps.observer;
    const observer: UpstreamObserver = {
      call: (c: UpstreamCall) => {
        stats.call(c);
        external?.call(c);
      },
      breaker: (state) => {
        stats.breaker(state);
        external?.breaker?.(state);
      },
      paced: (request) => {
        stats.paced(request);
        external?.paced?.(request);
      },
      egress: (change) => external?.egress?.(change),
      network: (failure) => {
        stats.network(failure);
        external?.network?.(failure);
      },
    };
    this.#breaker = deps.breaker ?? sharedBreaker(config.baseUrl, config.breaker);
    this.#unsubscribeBreaker = this.#breaker.onStateChange((state) => {
      observer.breaker?.(state);
      logger?.warn({ state }, 'youtube circuit breaker changed state');
    });
    this.#transport = new Transport(config, {
      // Read per request, once the parts below exist: the identities file may change versions.
      clientVersion: (name) => (name === 'none' ? undefined : this.#operations.innertube.clientVersion(name)),
      fetch: deps.fetch,
      logger: deps.logger,
      sleep: deps.sleep,
      observer,
      breaker: this.#breaker,
      clock: deps.clock,
    });
    const innertube = new Innertube(config, this.#transport, logger);
    const poTokens = new ClientPoTokens({
      url: config.poTokenProviderUrl,
      timeoutMs: config.timeoutMs,
      clock,
      observer: deps.observer?.poToken,
    });
    this.#operations = {
      innertube,
      players: new PlayerLadder(innertube, this.#ladder, poTokens, logger),
      poTokens,
      clock,
      logger,
      translator: deps.translator,
    };
    // Started once the parts exist: a change of the file is applied to them.
    this.#clientsFile?.start();
  }

  static create(config: YouTubeClientConfig, deps: YouTubeClientDeps = {}): YouTubeClient {
    return new YouTubeClient(config, deps);
  }

  /** The configuration in use (identities included, as the identities file last set them). */
  get config(): YouTubeClientConfig {
    return this.#operations.innertube.config;
  }

  /** Upstream HTTP calls made so far (coalesced calls count once). */
  get upstreamCalls(): number {
    return this.#transport.upstreamCalls;
  }

  /** The process-wide circuit breaker's state. */
  get breakerState(): 'closed' | 'open' | 'half_open' {
    return this.#breaker.state;
  }

  /** The PO-token provider's health (calls, failures, latency, token age); undefined until first used. */
  get poTokenHealth(): PoTokenHealth | undefined {
    return this.#operations.poTokens.health();
  }

  /** The adaptive caption ladder's record per client identity. */
  get ladder(): AdaptiveLadder {
    return this.#ladder;
  }

  /** The visitor sessions (for diagnostics and tests). */
  get sessions(): readonly Session[] {
    return this.#operations.innertube.sessions.sessions;
  }

  /** Fetches visitor data for every session now (optional: sessions otherwise adopt it from their first answer). */
  warmUp(timeoutMs?: number): Promise<void> {
    return this.#operations.innertube.sessions.warmUp(timeoutMs);
  }

  /**
   * Switches to new client identities (the identities file changed): requests from now on use them;
   * the adaptive ladder keeps its record per name and version, so a new version starts clean.
   */
  useIdentities(identities: ClientIdentities): void {
    this.#operations.innertube.useIdentities(identities);
  }

  /** Reads the identities file now, as its timer does (for tests and operators' tooling). */
  reloadIdentities(): Promise<void> {
    return this.#clientsFile?.check() ?? Promise.resolve();
  }

  async close(): Promise<void> {
    this.#clientsFile?.stop();
    this.#unsubscribeBreaker();
    await this.#operations.innertube.sessions.close();
    await this.#transport.close();
  }

  /** A video's transcript in the asked language (operations/transcripts.ts). */
  getTranscript(req: TranscriptRequest): Promise<Transcript> {
    return getTranscript(this.#operations, req);
  }

  /** A video's audio-only stream and metadata, for transcription (operations/audio.ts). */
  getAudio(req: AudioRequest): Promise<VideoAudio> {
    return getAudio(this.#operations, req);
  }

  /** A video's metadata (operations/metadata.ts). */
  getMetadata(videoId: string, include: readonly MetadataField[] = []): Promise<VideoMetadata> {
    return getMetadata(this.#operations, videoId, include);
  }

  /** Whether a video exists and which caption languages it has (operations/validation.ts). */
  validate(videoId: string): Promise<Validation & { error?: AppError }> {
    return validate(this.#operations, videoId);
  }

  /** A playlist's video ids, up to `max` (operations/playlists.ts). */
  getPlaylist(playlistId: string, max: number): Promise<Playlist> {
    return getPlaylist(this.#operations, playlistId, max);
  }

  /** A playlist past its first page, every continuation up to `max` (operations/listings.ts). */
  listPlaylist(playlistId: string, listing: ListingOptions): Promise<PlaylistListing> {
    return listPlaylistVideos(this.#operations, playlistId, listing);
  }

  /** A channel's videos, Shorts or live tab from its URL, up to `max` (operations/listings.ts). */
  listChannel(req: ChannelListingRequest): Promise<ChannelListing> {
    return listChannelVideos(this.#operations, req);
  }

  /** One page of search results, or the page a continuation names (operations/search.ts). */
  search(req: SearchRequest): Promise<SearchPage> {
    return search(this.#operations, req);
  }

  /** The first `max` videos of a search, every continuation up to `max` (operations/search.ts). */
  searchVideos(req: SearchVideosRequest): Promise<SearchVideos> {
    return searchVideos(this.#operations, req);
  }

  /** A video's comments with their replies, up to `max` (operations/comments.ts). */
  getComments(opts: { videoId: string; max: number; sort: CommentSort }): Promise<CommentsResult> {
    return getComments(this.#operations, opts);
  }
}

import { AppError, Errors } from '@subx/errors';
import { sharedBreaker, type CircuitBreaker } from './breaker.ts';
import { isWebFamily, type InnertubeClient } from './clients.ts';
import type { ClientIdentities, YouTubeClientConfig } from './config.ts';
import { ClientsFile, readInitialIdentities } from './identities/clients-file.ts';
import { availableLanguages, captionUrl, chooseTrack, type TrackChoice } from './language.ts';
import { UpstreamStats, type UpstreamCall, type UpstreamObserver } from './observer.ts';
import { parseCommentsPage, type CommentsPage, type CommentThread } from './parse/comments.ts';
import { at, isObj, str } from './parse/json.ts';
import {
  parseChapters,
  parseCommentCount,
  parseCommentsEntry,
  parseDateText,
  parseLikeCount,
} from './parse/next.ts';
import { parsePlaylistPage } from './parse/playlist.ts';
import { listChannelTab, type ChannelListing, type ChannelListingRequest } from './channel/list.ts';
import type { ListingOptions } from './listing/collect.ts';
import type { InnertubeCalls } from './listing/innertube.ts';
import { listPlaylist, type PlaylistListing } from './listing/playlist.ts';
import {
  classifyPlayability,
  hasMicroformat,
  parseCaptionTracks,
  parsePlayerMetadata,
} from './parse/player.ts';
import { TimedTextParseError, parseTimedText } from './parse/timedtext.ts';
import { SessionPool, type Session } from './sessions.ts';
import { commentsContinuation, playlistContinuation } from './tokens.ts';
import { Transport, UpstreamHttpError, outcomeOf, type TransportResponse } from './transport.ts';
import { AdaptiveLadder } from './ladder/adaptive-ladder.ts';
import { parseJson, playerBody } from './requests.ts';
import { PoTokenProvider, type PoTokenHealth, type PoTokenObserver } from './po-tokens/provider.ts';
import {
  NEXT_FIELDS,
  type Clock,
  type Comment,
  type CommentSort,
  type CommentsResult,
  type FetchLike,
  type Logger,
  type MetadataField,
  type Playlist,
  type Transcript,
  type TranscriptRequest,
  type Validation,
  type VideoMetadata,
} from './types.ts';

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
}

type Endpoint = 'player' | 'next' | 'browse' | 'resolve_url';

/** The session an operation runs on; replaced in place when the platform blocks it. */
interface Lease {
  s: Session;
}

interface PlayerHit {
  client: string;
  player: unknown;
}

interface PostOptions {
  lease: Lease;
  /** Extra query (field masks). */
  query?: string;
  /** For /player: a 200 whose playability says "blocked" throws, so it counts (and retries) as a block. */
  playerOf?: string;
}

export const MAX_COMMENTS = 2000;
const REFERER = 'https://www.youtube.com/';
/** Field mask of the metadata-only WEB /player: what the mobile clients lack (upload date, category). */
const MICROFORMAT_MASK = '&$fields=microformat,videoDetails';
/** PO tokens kept per video (bounded: an LRU of this many entries). */
const PO_TOKEN_CACHE = 500;

export class YouTubeClient {
  /** Replaced (never mutated) when the client identities file changes. */
  #config: YouTubeClientConfig;
  readonly #transport: Transport;
  readonly #clock: Clock;
  readonly #ladder: AdaptiveLadder;
  readonly #logger: Logger | undefined;
  readonly #sessions: SessionPool;
  readonly #breaker: CircuitBreaker;
  readonly #unsubscribeBreaker: () => void;
  /** Client contexts; the WEB version is healed at run time from /sw.js_data. */
  #clients: Record<string, InnertubeClient>;
  readonly #clientsFile: ClientsFile | undefined;
  #versionCheckedAt: number;
  #versionRefresh: Promise<void> | undefined;
  #poTokens: PoTokenProvider | undefined;
  readonly #poTokenObserver: PoTokenObserver | undefined;
  /** Running totals of upstream outcomes (client, endpoint, outcome). */
  readonly upstreamStats = new UpstreamStats();

  private constructor(config: YouTubeClientConfig, deps: YouTubeClientDeps) {
    this.#config = config;
    this.#clock = deps.clock ?? { now: () => Date.now() };
    this.#ladder = deps.ladder ?? new AdaptiveLadder({ clock: this.#clock, ...config.ladder });
    this.#logger = deps.logger;
    this.#clients = structuredClone(config.clients);
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
    this.#clientsFile?.start();
    this.#versionCheckedAt = Date.now();
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
    };
    this.#poTokenObserver = deps.observer?.poToken;
    this.#breaker = deps.breaker ?? sharedBreaker(config.baseUrl, config.breaker);
    this.#unsubscribeBreaker = this.#breaker.onStateChange((state) => {
      observer.breaker?.(state);
      this.#logger?.warn({ state }, 'youtube circuit breaker changed state');
    });
    this.#transport = new Transport(config, {
      clientVersion: (name) => (name === 'none' ? undefined : this.#clients[name]?.version),
      fetch: deps.fetch,
      logger: deps.logger,
      sleep: deps.sleep,
      observer,
      breaker: this.#breaker,
      clock: deps.clock,
    });
    this.#sessions = new SessionPool({
      config: config.sessions,
      proxies: config.proxies.length,
      bootstrap: (s) => this.#freshVisitor(s),
      logger: deps.logger,
    });
  }

  static create(config: YouTubeClientConfig, deps: YouTubeClientDeps = {}): YouTubeClient {
    return new YouTubeClient(config, deps);
  }

  /** The configuration in use (identities included, as the identities file last set them). */
  get config(): YouTubeClientConfig {
    return this.#config;
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
    return this.#poTokens?.health();
  }

  /** The adaptive caption ladder's record per client identity. */
  get ladder(): AdaptiveLadder {
    return this.#ladder;
  }

  /** The visitor sessions (for diagnostics and tests). */
  get sessions(): readonly Session[] {
    return this.#sessions.sessions;
  }

  /** Fetches visitor data for every session now (optional: sessions otherwise adopt it from their first answer). */
  warmUp(timeoutMs?: number): Promise<void> {
    return this.#sessions.warmUp(timeoutMs);
  }

  /**
   * Switches to new client identities (the identities file changed): requests from now on use them;
   * the adaptive ladder keeps its record per name and version, so a new version starts clean.
   */
  useIdentities(identities: ClientIdentities): void {
    this.#clients = structuredClone(identities.clients);
    this.#config = {
      ...this.#config,
      clients: identities.clients,
      captionClients: identities.captionClients,
      webClient: identities.webClient,
    };
  }

  /** Reads the identities file now, as its timer does (for tests and operators' tooling). */
  reloadIdentities(): Promise<void> {
    return this.#clientsFile?.check() ?? Promise.resolve();
  }

  async close(): Promise<void> {
    this.#clientsFile?.stop();
    this.#unsubscribeBreaker();
    await this.#sessions.close();
    await this.#transport.close();
  }

  // ---------------------------------------------------------------- transcripts

  /**
   * Cold: one /player of the first ladder client that answers (round trip 1), then the timedtext GET and,
   * for the upload date and category the mobile clients lack, a field-masked WEB /player in parallel
   * (round trip 2). /next joins round trip 1 when an opt-in field needs it.
   */
  async getTranscript(req: TranscriptRequest): Promise<Transcript> {
    const { videoId, language } = req;
    const include = req.include ?? [];
    const lease = this.#lease();
    const nextP = this.#maybeNext(videoId, include, lease);
    try {
      let chosen: { hit: PlayerHit; choice: TrackChoice; pot?: string } | undefined;
      let poTokenNeeded = false;
      let webWithoutCaptions = false;
      for await (const hit of this.#players(videoId, lease)) {
        const list = parseCaptionTracks(hit.player);
        const web = isWebFamily(this.#client(hit.client));
        if (list.tracks.length === 0) {
          // WEB omits `captions` without a signatureTimestamp: it never decides that there are none
          if (web) {
            webWithoutCaptions = true;
            continue;
          }
          throw Errors.noSubtitles(videoId);
        }
        const choice = chooseTrack(videoId, list, language, req.translate === true);
        if (choice.track.requiresPoToken) {
          if (this.#config.poTokenProviderUrl) {
            chosen = { hit, choice, pot: await this.#poToken(videoId) };
            break;
          }
          poTokenNeeded = true;
          this.#logger?.debug({ videoId, client: hit.client }, 'caption URL is gated; next client');
          continue;
        }
        chosen = { hit, choice };
        break;
      }
      if (!chosen) {
        throw poTokenNeeded
          ? Errors.upstreamBlocked('po_token', 'Every client returned caption URLs that need a PO token.')
          : Errors.upstreamError(
              webWithoutCaptions
                ? 'Only a WEB answer was available and it lists no captions (WEB hides them); retry later.'
                : 'No client returned a usable player response.',
            );
      }
      const { choice, hit, pot } = chosen;
      const [segments, metadata] = await Promise.all([
        this.#fetchCaptions(choice, hit.client, lease, pot),
        this.#metadataFrom(videoId, hit.player, include, nextP, lease),
      ]);
      return {
        videoId,
        language: choice.language,
        subtitleType: choice.subtitleType,
        ...(choice.translatedFrom ? { translatedFrom: choice.translatedFrom } : {}),
        segments,
        metadata,
      };
    } finally {
      nextP?.catch(() => undefined);
    }
  }

  /**
   * GET of the caption URL with the answering client's user agent and the watch page as Referer (timedtext
   * requests are fingerprinted). A 429 on a translated track is retried once in another format.
   */
  async #fetchCaptions(choice: TrackChoice, client: string, lease: Lease, pot?: string) {
    const get = async (fmt: string) => {
      let url = captionUrl(choice.track.baseUrl, choice.tlang, fmt);
      if (pot) {
        const u = new URL(url);
        u.searchParams.set('pot', pot);
        u.searchParams.set('potc', '1');
        u.searchParams.set('c', this.#client(client).name);
        url = u.toString();
      }
      return this.#transport.request({
        method: 'GET',
        url,
        endpoint: 'timedtext',
        client,
        proxy: lease.s.proxy,
        headers: { 'User-Agent': this.#client(client).userAgent, Referer: REFERER },
        inspect: (res) => {
          if (res.text.trim().length === 0) {
            throw Errors.upstreamBlocked(
              'empty_caption_body',
              'The platform returned an empty caption body (a PO token is required or we are blocked).',
            );
          }
          return undefined;
        },
      });
    };
    let res: TransportResponse;
    try {
      res = await get('json3');
    } catch (err) {
      if (!(choice.tlang && err instanceof AppError && err.reason === 'http_429')) throw err;
      // auto-translated tracks draw 429s; another format sometimes passes (yt-dlp #13770, FreeTube #7711)
      this.#logger?.debug({ tlang: choice.tlang }, 'translated caption 429; trying srv3');
      res = await get('srv3');
    }
    try {
      return parseTimedText(res.text, { dedupeRolling: choice.track.kind === 'asr' });
    } catch (err) {
      if (err instanceof TimedTextParseError)
        throw Errors.upstreamError(`Unparseable caption body: ${err.message}`, err);
      throw err;
    }
  }

  // ---------------------------------------------------------------- metadata

  /** One round trip: the ladder's /player, the masked WEB /player and (when asked) /next in parallel. */
  async getMetadata(videoId: string, include: readonly MetadataField[] = []): Promise<VideoMetadata> {
    const lease = this.#lease();
    const nextP = this.#maybeNext(videoId, include, lease);
    const webP = this.#maskedWebPlayer(videoId, lease);
    try {
      let primary: PlayerHit | undefined;
      for await (const hit of this.#players(videoId, lease)) {
        primary = hit;
        break;
      }
      if (!primary) throw Errors.upstreamError('No client returned a usable player response.');
      return await this.#metadataFrom(videoId, primary.player, include, nextP, lease, webP);
    } finally {
      nextP?.catch(() => undefined);
    }
  }

  #maybeNext(videoId: string, include: readonly MetadataField[], lease: Lease): Promise<unknown> | undefined {
    if (!include.some((f) => NEXT_FIELDS.includes(f))) return undefined;
    return this.#post('next', this.#config.webClient, { videoId }, { lease });
  }

  /** WEB /player masked to microformat: upload date and category. Failure only costs those fields. */
  #maskedWebPlayer(videoId: string, lease: Lease): Promise<unknown> {
    return this.#post('player', this.#config.webClient, playerBody(videoId, false), {
      lease,
      query: MICROFORMAT_MASK,
    }).catch((err: unknown) => {
      this.#logger?.warn({ videoId, err: (err as Error).message }, 'microformat request failed');
      return undefined;
    });
  }

  async #metadataFrom(
    videoId: string,
    primary: unknown,
    include: readonly MetadataField[],
    nextP: Promise<unknown> | undefined,
    lease: Lease,
    webP?: Promise<unknown>,
  ): Promise<VideoMetadata> {
    const web = hasMicroformat(primary) ? undefined : await (webP ?? this.#maskedWebPlayer(videoId, lease));
    const base = parsePlayerMetadata(videoId, primary, web);
    const next = nextP ? await nextP : undefined;
    const meta: VideoMetadata = {
      title: base.title,
      channel: base.channel,
      channelId: base.channelId,
      duration: base.duration,
      uploadDate: base.uploadDate || (next ? parseDateText(next) : ''),
      thumbnailUrl: base.thumbnailUrl,
    };
    const want = new Set(include);
    if (want.has('description')) meta.description = base.description;
    if (want.has('tags')) meta.tags = base.tags;
    if (want.has('categories')) meta.categories = base.categories;
    if (want.has('view_count')) meta.viewCount = base.viewCount;
    if (want.has('is_live')) meta.isLive = base.isLive;
    if (want.has('was_live')) meta.wasLive = base.wasLive;
    if (next !== undefined) {
      // Hidden like counts and turned-off comments read as 0.
      if (want.has('like_count')) meta.likeCount = parseLikeCount(next) ?? 0;
      if (want.has('comment_count')) meta.commentCount = parseCommentCount(next) ?? 0;
      if (want.has('chapters')) meta.chapters = parseChapters(next, base.duration);
    }
    return meta;
  }

  // ---------------------------------------------------------------- validation

  /**
   * One /player call of the caption ladder (more only when a client fails in a client-specific way), so it
   * lists the tracks WEB hides. A video that does not exist or cannot be read is `valid: false` with the
   * error; platform trouble (blocked, timeout) throws.
   */
  async validate(videoId: string): Promise<Validation & { error?: AppError }> {
    const lease = this.#lease();
    try {
      for await (const hit of this.#players(videoId, lease)) {
        const list = parseCaptionTracks(hit.player);
        if (list.tracks.length === 0 && isWebFamily(this.#client(hit.client))) continue;
        const langs = availableLanguages(list);
        const meta = parsePlayerMetadata(videoId, hit.player);
        return {
          valid: true,
          hasSubtitles: list.tracks.length > 0,
          manualLanguages: langs.manual,
          autoGeneratedLanguages: langs.autoGenerated,
          title: meta.title,
          duration: meta.duration,
        };
      }
      throw Errors.upstreamError('No client returned a usable player response.');
    } catch (err) {
      if (err instanceof AppError && (err.code === 'VIDEO_NOT_FOUND' || err.code === 'VIDEO_UNAVAILABLE')) {
        return {
          valid: false,
          hasSubtitles: false,
          manualLanguages: [],
          autoGeneratedLanguages: [],
          title: '',
          duration: 0,
          error: err,
        };
      }
      throw err;
    }
  }

  // ---------------------------------------------------------------- playlists

  /**
   * First /browse page, then continuations. The first page comes in three shapes: classic (items in a
   * playlistVideoListRenderer), flat (lockupViewModel items straight in an itemSectionRenderer) and
   * header-only, which is continued with the first continuation built from the playlist id.
   */
  async getPlaylist(playlistId: string, max: number): Promise<Playlist> {
    const web = this.#config.webClient;
    const lease = this.#lease();
    const browse = (body: Record<string, unknown>) =>
      this.#post('browse', web, body, { lease }).then(parsePlaylistPage);
    const first = await browse({ browseId: `VL${playlistId}` });
    const headerOnly = first.videoIds.length === 0 && !first.nextToken;
    if (first.error || (headerOnly && first.title === undefined && first.totalVideos === undefined)) {
      throw Errors.playlistNotFound(playlistId);
    }
    const ids = [...first.videoIds];
    const seenTokens = new Set<string>();
    let token = first.nextToken;
    if (headerOnly && first.totalVideos !== 0) {
      this.#logger?.debug({ playlistId }, 'header-only first playlist page; building the first continuation');
      token = playlistContinuation(playlistId);
    }
    while (ids.length < max && token && !seenTokens.has(token)) {
      seenTokens.add(token);
      const page = await browse({ continuation: token });
      if (page.videoIds.length === 0) break;
      ids.push(...page.videoIds);
      token = page.nextToken;
    }
    if (ids.length === 0 && first.totalVideos !== 0 && max > 0) {
      throw Errors.upstreamError(
        `The platform listed no videos for playlist ${playlistId}, which reports ` +
          `${first.totalVideos ?? 'an unknown number of'} videos; retry later.`,
      );
    }
    return {
      playlistId,
      title: first.title ?? '',
      uploader: first.uploader ?? '',
      totalVideos: first.totalVideos ?? ids.length,
      videoIds: ids.slice(0, Math.max(0, max)),
    };
  }

  // ---------------------------------------------------------------- long listings (src/listing, src/channel)

  /** A playlist past its first page, every continuation up to `max` (bounded; for bulk jobs). */
  listPlaylist(playlistId: string, listing: ListingOptions): Promise<PlaylistListing> {
    return listPlaylist(this.#innertube(), playlistId, listing);
  }

  /** A channel's videos, Shorts or live tab from its URL, continuations up to `max` (bounded). */
  listChannel(req: ChannelListingRequest): Promise<ChannelListing> {
    return listChannelTab(this.#innertube(), req);
  }

  /** /browse and resolve_url as the WEB client, on one session for the whole listing. */
  #innertube(): InnertubeCalls {
    const lease = this.#lease();
    const web = this.#config.webClient;
    return {
      browse: (body) => this.#post('browse', web, body, { lease }),
      resolveUrl: (url) => this.#post('resolve_url', web, { url }, { lease }),
      logger: this.#logger,
    };
  }

  // ---------------------------------------------------------------- comments

  /**
   * Watch-next, then comments pages. Disabled only on the explicit "turned off" message; with no entry at
   * all the first continuation is built from the video id. An empty page is asked again once: an empty
   * first page of a video that has comments is UPSTREAM_ERROR, a later one ends the listing as `partial`
   * (callers must not cache it as complete).
   */
  async getComments(opts: { videoId: string; max: number; sort: CommentSort }): Promise<CommentsResult> {
    const { videoId } = opts;
    const max = Math.min(MAX_COMMENTS, Math.max(1, Math.floor(opts.max)));
    const web = this.#config.webClient;
    const lease = this.#lease();
    const next = await this.#post('next', web, { videoId }, { lease });
    if (!isObj(at(next, 'contents'))) throw await this.#whyNoWatchNext(videoId, lease);
    const entry = parseCommentsEntry(next);
    if (entry.disabled) return { comments: [], commentsDisabled: true, totalCount: 0 };
    const now = this.#clock.now();
    const page = (token: string, parentId?: string) =>
      this.#post('next', web, { continuation: token }, { lease }).then((raw) =>
        parseCommentsPage(raw, now, parentId),
      );
    /** A page with nothing on it is asked again once (the platform sometimes answers empty). */
    const pageOnceMore = async (token: string): Promise<CommentsPage> => {
      const p = await page(token);
      if (p.threads.length > 0 || p.nextToken) return p;
      this.#logger?.debug({ videoId }, 'empty comments page; asking once more');
      return page(token);
    };

    let topToken = entry.topToken;
    if (!topToken && entry.missing) {
      this.#logger?.debug({ videoId }, 'no comments entry in watch-next; building the continuation');
      topToken = commentsContinuation(videoId);
    }
    let token = opts.sort === 'time' ? entry.newestToken : topToken;
    let totalCount = entry.count;
    const emptyTwice = () =>
      Errors.upstreamError('The platform returned an empty comments page twice; retry later.');
    if (!token && opts.sort === 'time' && topToken) {
      // no sort menu in watch-next: the first comments page header has it (one extra call)
      const top = await pageOnceMore(topToken);
      totalCount = top.totalCount ?? totalCount;
      token = top.newestToken;
      if (!token && top.threads.length === 0) {
        if (totalCount === 0) return { comments: [], commentsDisabled: false, totalCount: 0 };
        throw emptyTwice();
      }
    }
    if (!token) throw Errors.upstreamError('Comments are enabled but no comments continuation was found.');

    const out: Comment[] = [];
    const seenIds = new Set<string>();
    const seenTokens = new Set<string>();
    const push = (c: Comment) => {
      if (out.length >= max || seenIds.has(c.id)) return;
      seenIds.add(c.id);
      out.push(c);
    };
    let partial = false;
    let pages = 0;
    while (token && out.length < max && !seenTokens.has(token)) {
      seenTokens.add(token);
      const p = await pageOnceMore(token);
      pages++;
      totalCount ??= p.totalCount;
      if (p.totalCount !== undefined && totalCount === entry.count) totalCount = p.totalCount;
      if (p.threads.length === 0) {
        // a video with no comments yet says so in its count; anything else is the platform failing
        if (pages === 1 && totalCount !== 0) throw emptyTwice();
        partial = pages > 1;
        break;
      }
      await this.#collectThreads(p.threads, out, push, max, seenTokens, page);
      token = p.nextToken;
    }
    return {
      comments: out,
      commentsDisabled: false,
      totalCount: totalCount ?? out.length,
      ...(partial ? { partial: true } : {}),
    };
  }

  /** Parents in order, each followed by its replies; reply pages are prefetched only within the budget. */
  async #collectThreads(
    threads: CommentThread[],
    out: Comment[],
    push: (c: Comment) => void,
    max: number,
    seenTokens: Set<string>,
    page: (token: string, parentId?: string) => Promise<CommentsPage>,
  ): Promise<void> {
    const prefetched = new Map<number, Promise<CommentsPage>>();
    const prefetch = (from: number) => {
      let needed = out.length;
      for (let j = from; j < threads.length && j < from + this.#config.commentConcurrency; j++) {
        const t = threads[j] as CommentThread;
        needed += 1 + t.replies.length;
        if (needed >= max) break;
        if (t.repliesToken && !prefetched.has(j)) {
          const p = page(t.repliesToken, t.comment.id);
          p.catch(() => undefined);
          prefetched.set(j, p);
        }
        needed += Math.max(0, t.replyCount - t.replies.length);
      }
    };
    for (let i = 0; i < threads.length && out.length < max; i++) {
      const t = threads[i] as CommentThread;
      push(t.comment);
      for (const r of t.replies) push(r);
      let rtok = t.repliesToken;
      if (!rtok || out.length >= max || seenTokens.has(rtok)) continue;
      prefetch(i);
      let pending = prefetched.get(i) ?? page(rtok, t.comment.id);
      for (;;) {
        seenTokens.add(rtok);
        const replies = await pending;
        for (const r of replies.replies) push(r);
        // nested reply threads ("show more replies" under a reply) hang off the same parent
        for (const nested of replies.threads) {
          push({ ...nested.comment, isReply: true, parentId: t.comment.id });
          for (const r of nested.replies) push({ ...r, parentId: t.comment.id });
        }
        rtok = replies.nextToken;
        if (!rtok || out.length >= max || seenTokens.has(rtok)) break;
        pending = page(rtok, t.comment.id);
      }
    }
  }

  /**
   * Watch-next without contents says nothing about why; the player does (private, members-only,
   * geo, bot check, ...), so one player request classifies it the same way extraction does.
   */
  async #whyNoWatchNext(videoId: string, lease: Lease): Promise<AppError> {
    try {
      for await (const _hit of this.#players(videoId, lease)) {
        // Playable, yet watch-next came back empty: the platform answered something we cannot use.
        return Errors.upstreamError('The platform returned an empty watch-next page for a playable video.');
      }
    } catch (err) {
      if (err instanceof AppError) return err;
      throw err;
    }
    return Errors.videoNotFound(videoId);
  }

  // ---------------------------------------------------------------- the caption ladder

  #client(name: string): InnertubeClient {
    return this.#clients[name] as InnertubeClient;
  }

  #lease(): Lease {
    return { s: this.#sessions.acquire() };
  }

  /**
   * Playable /player answers of the caption ladder, in order. Definitive errors (private, members-only,
   * ...) stop at once. A session-level block (bot check, page reload, unexplained sign-in, "try again
   * later") is retried once on a fresh session, then the next client is asked; an IP-level one (429,
   * captcha) ends the ladder, since the transport has already tried every egress address. "Not found" from one client is confirmed by another
   * before VIDEO_NOT_FOUND. When every client fails: a block wins (retryable), then a client-specific
   * unavailability, then a confirmed or sole not-found, then the first transport error.
   */
  async *#players(videoId: string, lease: Lease): AsyncGenerator<PlayerHit> {
    const configured = this.#config.captionClients;
    const ladder = this.#ladder.order(configured.map((name) => this.#client(name))).map((c) => c.name);
    let blocked: AppError | undefined;
    let unavailable: AppError | undefined;
    let notFound: AppError | undefined;
    let notFoundVotes = 0;
    let failed: AppError | undefined;
    let freshSessionTried = false;
    let yielded = false;
    for (const name of ladder) {
      const client = this.#client(name);
      const web = isWebFamily(client);
      if (web && this.#config.poTokenProviderUrl) void this.#poToken(videoId).catch(() => undefined);
      for (;;) {
        let player: unknown;
        try {
          player = await this.#post('player', name, playerBody(videoId, web, client), {
            lease,
            playerOf: videoId,
          });
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          this.#ladder.record(client, outcomeOf(err) === 'client_rejected' ? 'client_failed' : 'neutral');
          if (err.code === 'UPSTREAM_BLOCKED') {
            // IP-level answers (429, captcha) are not about the client or the visitor: the transport has
            // already tried the other egress addresses, so asking again from here only hammers
            if (err.reason === 'cooling_down' || err.reason === 'http_429' || err.reason === 'captcha')
              throw err;
            blocked ??= err;
            if (!freshSessionTried) {
              freshSessionTried = true;
              this.#logger?.debug({ videoId, client: name, reason: err.reason }, 'blocked; fresh session');
              continue;
            }
            break;
          }
          if (err.code === 'UPSTREAM_ERROR') {
            failed ??= err;
            break;
          }
          throw err;
        }
        const verdict = classifyPlayability(player, videoId);
        if (verdict.ok) {
          this.#ladder.record(client, 'ok');
          yielded = true;
          yield { client: name, player };
          break;
        }
        if (verdict.definitive) throw verdict.error;
        if (verdict.unconfirmedNotFound) {
          notFoundVotes++;
          notFound ??= verdict.error;
          if (notFoundVotes >= 2) throw verdict.error;
          this.#logger?.debug({ videoId, client: name }, 'not found on one client; confirming with the next');
        } else unavailable ??= verdict.error;
        break;
      }
    }
    if (yielded) return;
    if (blocked) throw blocked;
    if (unavailable) throw unavailable;
    if (notFound && configured.length === 1) throw notFound;
    if (notFound) {
      throw Errors.upstreamError(
        `One client said video ${videoId} does not exist and no other client could confirm it; retry later.`,
      );
    }
    throw failed ?? Errors.upstreamError('No caption client is configured.');
  }

  // ---------------------------------------------------------------- sessions, versions, PO tokens

  /** Fresh visitor data for a session, from /youtubei/v1/visitor_id or /sw.js_data. */
  async #freshVisitor(s: Session): Promise<string | undefined> {
    if (this.#config.sessions.bootstrap === 'sw_js_data') return (await this.#swJsData(s.proxy)).visitorData;
    const res = await this.#transport.request({
      method: 'POST',
      url: '/youtubei/v1/visitor_id?prettyPrint=false',
      endpoint: 'visitor_id',
      client: this.#config.webClient,
      proxy: s.proxy,
      coalesceKey: `visitor_id ${s.id}`,
      headers: this.#headers(this.#client(this.#config.webClient), undefined),
      body: JSON.stringify({ context: this.#context(this.#client(this.#config.webClient), undefined) }),
      inspect: (r) => str(at(parseJson(r.text, 'visitor_id'), 'responseContext', 'visitorData')),
    });
    return res.parsed as string | undefined;
  }

  /** The live WEB client version and a visitorData, as YouTube.js reads them (`device_info[16]`, `[13]`). */
  async #swJsData(proxy: number): Promise<{ version?: string; visitorData?: string }> {
    const res = await this.#transport.request({
      method: 'GET',
      url: '/sw.js_data',
      endpoint: 'sw_js_data',
      client: 'none',
      proxy,
      headers: { 'User-Agent': this.#client(this.#config.webClient).userAgent, Referer: `${REFERER}sw.js` },
      inspect: (r) => {
        const body = r.text.replace(/^\)\]\}'\s*/, '');
        const data = parseJson(body, 'sw.js_data');
        const info = at(data, 0, 2, 0, 0);
        if (!Array.isArray(info))
          throw Errors.upstreamError('The platform changed the shape of /sw.js_data.');
        const version = str(info[16]);
        const visitorData = str(info[13]);
        return {
          ...(version && /^\d+\.\d{8}\.\d+\.\d+$/.test(version) ? { version } : {}),
          ...(visitorData ? { visitorData } : {}),
        };
      },
    });
    return res.parsed as { version?: string; visitorData?: string };
  }

  /** Reads the live WEB version (at most one refresh in flight); never throws. */
  #refreshVersion(): Promise<void> {
    this.#versionRefresh ??= this.#swJsData(0)
      .then(({ version }) => {
        this.#versionCheckedAt = Date.now();
        const web = this.#client(this.#config.webClient);
        if (version && version !== web.version) {
          this.#logger?.warn({ from: web.version, to: version }, 'youtube WEB client version healed');
          web.version = version;
        }
      })
      .catch((err: unknown) => {
        this.#logger?.warn({ err: (err as Error).message }, 'reading the live WEB client version failed');
      })
      .finally(() => {
        this.#versionRefresh = undefined;
      });
    return this.#versionRefresh;
  }

  /** A PO token for the video's WEB caption URLs (cached per video until the provider's expiry). */
  #poToken(videoId: string): Promise<string> {
    this.#poTokens ??= new PoTokenProvider({
      url: this.#config.poTokenProviderUrl ?? '',
      timeoutMs: this.#config.timeoutMs,
      clock: this.#clock,
      maxEntries: PO_TOKEN_CACHE,
      ...(this.#poTokenObserver ? { observer: this.#poTokenObserver } : {}),
    });
    return this.#poTokens.get(videoId);
  }

  // ---------------------------------------------------------------- plumbing

  #context(c: InnertubeClient, visitorData: string | undefined): Record<string, unknown> {
    return {
      client: {
        clientName: c.name,
        clientVersion: c.version,
        hl: this.#config.hl,
        gl: this.#config.gl,
        timeZone: 'UTC',
        utcOffsetMinutes: 0,
        ...(visitorData ? { visitorData } : {}),
        ...c.extra,
      },
    };
  }

  #headers(c: InnertubeClient, visitorData: string | undefined): Record<string, string> {
    return {
      'X-YouTube-Client-Name': String(c.id),
      'X-YouTube-Client-Version': c.version,
      'User-Agent': c.userAgent,
      Origin: 'https://www.youtube.com',
      ...(visitorData ? { 'X-Goog-Visitor-Id': visitorData } : {}),
    };
  }

  /**
   * One InnerTube call as `clientName` on the lease's session. A 400 FAILED_PRECONDITION of a WEB-family
   * client (a retired version) reads the live version from /sw.js_data and retries once.
   */
  async #post(
    endpoint: Endpoint,
    clientName: string,
    body: Record<string, unknown>,
    opts: PostOptions,
    healed = false,
  ): Promise<unknown> {
    const c = this.#client(clientName);
    const web = isWebFamily(c);
    if (
      web &&
      this.#config.versionRefreshMs > 0 &&
      Date.now() - this.#versionCheckedAt > this.#config.versionRefreshMs
    ) {
      void this.#refreshVersion();
    }
    const session = opts.lease.s;
    const query = opts.query ?? '';
    try {
      const res = await this.#transport.request({
        method: 'POST',
        url: `/youtubei/v1/${endpoint === 'resolve_url' ? 'navigation/resolve_url' : endpoint}?prettyPrint=false${query}`,
        endpoint,
        client: clientName,
        proxy: session.proxy,
        onProxyMoved: (p) => {
          session.proxy = p;
        },
        // concurrent identical calls share one answer whatever session asked
        coalesceKey: `${endpoint}${query} ${clientName} ${c.version} ${JSON.stringify(body)}`,
        headers: this.#headers(c, session.visitorData),
        body: JSON.stringify({ context: this.#context(c, session.visitorData), ...body }),
        inspect: (r) => {
          const json = parseJson(r.text, endpoint);
          if (opts.playerOf !== undefined) {
            const verdict = classifyPlayability(json, opts.playerOf);
            if (!verdict.ok && verdict.error.code === 'UPSTREAM_BLOCKED') throw verdict.error;
          }
          return json;
        },
      });
      this.#sessions.adopt(session, str(at(res.parsed, 'responseContext', 'visitorData')));
      return res.parsed;
    } catch (err) {
      if (err instanceof AppError && err.code === 'UPSTREAM_BLOCKED' && err.reason !== 'cooling_down') {
        // this visitor (and its egress) is what the platform is counting: the operation moves on
        opts.lease.s = this.#sessions.retire(session, err.reason ?? 'blocked');
      }
      const http = err instanceof AppError ? err.cause : undefined;
      if (
        !healed &&
        web &&
        http instanceof UpstreamHttpError &&
        http.status === 400 &&
        http.apiStatus === 'FAILED_PRECONDITION'
      ) {
        this.#logger?.warn({ client: clientName, version: c.version }, 'WEB client version refused; healing');
        await this.#refreshVersion();
        return this.#post(endpoint, clientName, body, opts, true);
      }
      throw err;
    }
  }
}

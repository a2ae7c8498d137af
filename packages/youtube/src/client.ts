import { AppError, Errors } from '@subx/errors';
import type { InnertubeClient } from './clients.ts';
import type { YouTubeClientConfig } from './config.ts';
import { availableLanguages, captionUrl, chooseTrack, type TrackChoice } from './language.ts';
import { parseCommentsPage, type CommentThread } from './parse/comments.ts';
import { at, isObj, str } from './parse/json.ts';
import {
  parseChapters,
  parseCommentCount,
  parseCommentsEntry,
  parseDateText,
  parseLikeCount,
} from './parse/next.ts';
import { parsePlaylistPage } from './parse/playlist.ts';
import {
  classifyPlayability,
  hasMicroformat,
  parseCaptionTracks,
  parsePlayerMetadata,
} from './parse/player.ts';
import { TimedTextParseError, parseTimedText } from './parse/timedtext.ts';
import { UpstreamStats, type UpstreamCall, type UpstreamObserver } from './observer.ts';
import { Transport } from './transport.ts';
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
}

type Endpoint = 'player' | 'next' | 'browse';

interface PlayerHit {
  client: string;
  player: unknown;
}

export const MAX_COMMENTS = 2000;

export class YouTubeClient {
  readonly #config: YouTubeClientConfig;
  readonly #transport: Transport;
  readonly #clock: Clock;
  readonly #logger: Logger | undefined;
  #visitorData: string | undefined;
  /** Running totals of upstream outcomes (client, endpoint, outcome). */
  readonly upstreamStats = new UpstreamStats();

  private constructor(config: YouTubeClientConfig, deps: YouTubeClientDeps) {
    this.#config = config;
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
    };
    this.#transport = new Transport(config, {
      fetch: deps.fetch,
      logger: deps.logger,
      sleep: deps.sleep,
      observer,
    });
    this.#clock = deps.clock ?? { now: () => Date.now() };
    this.#logger = deps.logger;
  }

  static create(config: YouTubeClientConfig, deps: YouTubeClientDeps = {}): YouTubeClient {
    return new YouTubeClient(config, deps);
  }

  /** Upstream HTTP calls made so far (coalesced calls count once). */
  get upstreamCalls(): number {
    return this.#transport.upstreamCalls;
  }

  close(): Promise<void> {
    return this.#transport.close();
  }

  // ---------------------------------------------------------------- transcripts

  async getTranscript(req: TranscriptRequest): Promise<Transcript> {
    const { videoId, language } = req;
    const include = req.include ?? [];
    const nextP = this.#maybeNext(videoId, include);
    try {
      const seen: PlayerHit[] = [];
      let chosen: { hit: PlayerHit; choice: TrackChoice } | undefined;
      let poTokenNeeded = false;
      for await (const hit of this.#players(videoId, seen)) {
        const list = parseCaptionTracks(hit.player);
        // the first playable answer decides whether captions exist at all
        if (list.tracks.length === 0) throw Errors.noSubtitles(videoId);
        const choice = chooseTrack(videoId, list, language, req.translate === true);
        if (choice.track.requiresPoToken) {
          poTokenNeeded = true;
          this.#logger?.debug(
            { videoId, client: hit.client },
            'caption track needs a PO token; trying the next client',
          );
          continue;
        }
        chosen = { hit, choice };
        break;
      }
      if (!chosen) {
        throw poTokenNeeded
          ? Errors.upstreamBlocked('po_token', 'Every client returned caption URLs that need a PO token.')
          : Errors.upstreamError('No client returned a usable player response.');
      }
      const { choice } = chosen;
      const [segments, metadata] = await Promise.all([
        this.#fetchCaptions(choice, chosen.hit.client),
        this.#metadataFrom(videoId, chosen.hit.player, seen, include, nextP),
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

  async #fetchCaptions(choice: TrackChoice, client: string) {
    const res = await this.#transport.request({
      method: 'GET',
      url: captionUrl(choice.track.baseUrl, choice.tlang),
      endpoint: 'timedtext',
      client,
    });
    if (res.text.trim().length === 0) {
      throw Errors.upstreamBlocked(
        'empty_caption_body',
        'The platform returned an empty caption body (a PO token is required or we are blocked).',
      );
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

  async getMetadata(videoId: string, include: readonly MetadataField[] = []): Promise<VideoMetadata> {
    const nextP = this.#maybeNext(videoId, include);
    try {
      const seen: PlayerHit[] = [];
      let primary: PlayerHit | undefined;
      for await (const hit of this.#players(videoId, seen)) {
        primary = hit;
        break;
      }
      if (!primary) throw Errors.upstreamError('No client returned a usable player response.');
      return await this.#metadataFrom(videoId, primary.player, seen, include, nextP);
    } finally {
      nextP?.catch(() => undefined);
    }
  }

  #maybeNext(videoId: string, include: readonly MetadataField[]): Promise<unknown> | undefined {
    if (!include.some((f) => NEXT_FIELDS.includes(f))) return undefined;
    return this.#post('next', this.#config.webClient, { videoId });
  }

  async #metadataFrom(
    videoId: string,
    primary: unknown,
    seen: PlayerHit[],
    include: readonly MetadataField[],
    nextP: Promise<unknown> | undefined,
  ): Promise<VideoMetadata> {
    let web = seen.find((h) => hasMicroformat(h.player))?.player;
    const askedWeb = seen.some((h) => h.client === this.#config.webClient);
    if (!web && !askedWeb) {
      // Mobile clients omit microformat (upload date, category): one masked WEB /player call.
      web = await this.#post(
        'player',
        this.#config.webClient,
        this.#playerBody(videoId),
        '&$fields=microformat,videoDetails',
      ).catch((err: unknown) => {
        this.#logger?.warn({ videoId, err: (err as Error).message }, 'microformat request failed');
        return undefined;
      });
    }
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
   * One /player call (more only when a client fails in a client-specific way). A video that does not exist or
   * cannot be read is `valid: false` with the error; platform trouble (blocked, timeout) throws.
   */
  async validate(videoId: string): Promise<Validation & { error?: AppError }> {
    try {
      for await (const hit of this.#players(videoId, [])) {
        const list = parseCaptionTracks(hit.player);
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

  async getPlaylist(playlistId: string, max: number): Promise<Playlist> {
    const web = this.#config.webClient;
    const first = parsePlaylistPage(await this.#post('browse', web, { browseId: `VL${playlistId}` }));
    if (first.error || (first.title === undefined && first.videoIds.length === 0)) {
      throw Errors.playlistNotFound(playlistId);
    }
    const ids = [...first.videoIds];
    const seenTokens = new Set<string>();
    let token = first.nextToken;
    while (ids.length < max && token && !seenTokens.has(token)) {
      seenTokens.add(token);
      const page = parsePlaylistPage(await this.#post('browse', web, { continuation: token }));
      if (page.videoIds.length === 0) break;
      ids.push(...page.videoIds);
      token = page.nextToken;
    }
    return {
      playlistId,
      title: first.title ?? '',
      uploader: first.uploader ?? '',
      totalVideos: first.totalVideos ?? ids.length,
      videoIds: ids.slice(0, Math.max(0, max)),
    };
  }

  // ---------------------------------------------------------------- comments

  async getComments(opts: { videoId: string; max: number; sort: CommentSort }): Promise<CommentsResult> {
    const { videoId } = opts;
    const max = Math.min(MAX_COMMENTS, Math.max(1, Math.floor(opts.max)));
    const web = this.#config.webClient;
    const next = await this.#post('next', web, { videoId });
    if (!isObj(at(next, 'contents'))) throw await this.#whyNoWatchNext(videoId);
    const entry = parseCommentsEntry(next);
    if (entry.disabled) return { comments: [], commentsDisabled: true, totalCount: 0 };
    const now = this.#clock.now();

    let token = opts.sort === 'time' ? entry.newestToken : entry.topToken;
    let totalCount = entry.count;
    if (!token && opts.sort === 'time' && entry.topToken) {
      // no sort menu in watch-next: the first comments page header has it (one extra call)
      const top = parseCommentsPage(await this.#post('next', web, { continuation: entry.topToken }), now);
      totalCount = top.totalCount ?? totalCount;
      token = top.newestToken;
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
    while (token && out.length < max && !seenTokens.has(token)) {
      seenTokens.add(token);
      const page = parseCommentsPage(await this.#post('next', web, { continuation: token }), now);
      totalCount ??= page.totalCount;
      if (page.totalCount !== undefined && totalCount === entry.count) totalCount = page.totalCount;
      if (page.threads.length === 0) break;
      await this.#collectThreads(page.threads, out, push, max, seenTokens, now);
      token = page.nextToken;
    }
    return { comments: out, commentsDisabled: false, totalCount: totalCount ?? out.length };
  }

  /** Parents in order, each followed by its replies; reply pages are prefetched only within the budget. */
  async #collectThreads(
    threads: CommentThread[],
    out: Comment[],
    push: (c: Comment) => void,
    max: number,
    seenTokens: Set<string>,
    now: number,
  ): Promise<void> {
    const web = this.#config.webClient;
    const prefetched = new Map<number, Promise<unknown>>();
    const prefetch = (from: number) => {
      let needed = out.length;
      for (let j = from; j < threads.length && j < from + this.#config.commentConcurrency; j++) {
        const t = threads[j] as CommentThread;
        needed += 1 + t.replies.length;
        if (needed >= max) break;
        if (t.repliesToken && !prefetched.has(j)) {
          const p = this.#post('next', web, { continuation: t.repliesToken });
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
      let raw = prefetched.get(i) ?? this.#post('next', web, { continuation: rtok });
      for (;;) {
        seenTokens.add(rtok);
        const page = parseCommentsPage(await raw, now, t.comment.id);
        for (const r of page.replies) push(r);
        for (const nested of page.threads) {
          push({ ...nested.comment, isReply: true, parentId: t.comment.id });
          for (const r of nested.replies) push({ ...r, parentId: t.comment.id });
        }
        rtok = page.nextToken;
        if (!rtok || out.length >= max || seenTokens.has(rtok)) break;
        raw = this.#post('next', web, { continuation: rtok });
      }
    }
  }

  // ---------------------------------------------------------------- plumbing

  #playerBody(videoId: string): Record<string, unknown> {
    return {
      videoId,
      contentCheckOk: true,
      racyCheckOk: true,
      playbackContext: { contentPlaybackContext: { html5Preference: 'HTML5_PREF_WANTS' } },
    };
  }

  /**
   * Playable /player answers in client order. Definitive errors (private, not found, ...) stop at once;
   * client-specific ones (unplayable on this client, different video, HTTP 400 of a retired version) try the
   * next client and, when all fail, the first error is reported.
   */
  /**
   * Watch-next without contents says nothing about why; the player does (private, members-only,
   * geo, bot check, ...), so one player request classifies it the same way extraction does.
   */
  async #whyNoWatchNext(videoId: string): Promise<AppError> {
    try {
      for await (const _hit of this.#players(videoId, [])) {
        // Playable, yet watch-next came back empty: the platform answered something we cannot use.
        return Errors.upstreamError('The platform returned an empty watch-next page for a playable video.');
      }
    } catch (err) {
      if (err instanceof AppError) return err;
      throw err;
    }
    return Errors.videoNotFound(videoId);
  }

  async *#players(videoId: string, seen: PlayerHit[]): AsyncGenerator<PlayerHit> {
    let firstError: AppError | undefined;
    let yielded = false;
    for (const name of this.#config.playerClients) {
      let player: unknown;
      try {
        player = await this.#post('player', name, this.#playerBody(videoId));
      } catch (err) {
        if (err instanceof AppError && err.code === 'UPSTREAM_ERROR') {
          firstError ??= err;
          continue;
        }
        throw err;
      }
      const returned = str(at(player, 'videoDetails', 'videoId'));
      if (returned === undefined || returned === videoId) seen.push({ client: name, player });
      const verdict = classifyPlayability(player, videoId);
      if (verdict.ok) {
        yielded = true;
        yield { client: name, player };
        continue;
      }
      if (verdict.definitive) throw verdict.error;
      if (verdict.error.code === 'UPSTREAM_BLOCKED') this.#transport.rotateProxy();
      firstError ??= verdict.error;
    }
    if (!yielded) throw firstError ?? Errors.upstreamError('No player client is configured.');
  }

  async #post(
    endpoint: Endpoint,
    clientName: string,
    body: Record<string, unknown>,
    query = '',
  ): Promise<unknown> {
    const c = this.#config.clients[clientName] as InnertubeClient;
    const payload = {
      context: {
        client: {
          clientName: c.name,
          clientVersion: c.version,
          hl: this.#config.hl,
          gl: this.#config.gl,
          timeZone: 'UTC',
          utcOffsetMinutes: 0,
          ...c.extra,
        },
      },
      ...body,
    };
    const headers: Record<string, string> = {
      'X-YouTube-Client-Name': String(c.id),
      'X-YouTube-Client-Version': c.version,
      'User-Agent': c.userAgent,
      Origin: 'https://www.youtube.com',
    };
    if (this.#visitorData) headers['X-Goog-Visitor-Id'] = this.#visitorData;
    const res = await this.#transport.request({
      method: 'POST',
      url: `/youtubei/v1/${endpoint}?prettyPrint=false${query}`,
      endpoint,
      client: clientName,
      headers,
      body: JSON.stringify(payload),
    });
    let json: unknown;
    try {
      json = JSON.parse(res.text);
    } catch {
      throw Errors.upstreamError(`The platform's ${endpoint} answer is not JSON.`);
    }
    const visitor = str(at(json, 'responseContext', 'visitorData'));
    if (visitor) this.#visitorData = visitor;
    return json;
  }
}

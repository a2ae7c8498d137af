/**
 * The caption ladder: the configured /player clients in the adaptive ladder's order, until one
 * answers with a playable video, with the rules for blocks, client-specific failures and
 * not-found answers (which another client must confirm).
 */
import { AppError, Errors } from '@subx/errors';
import { candidateClients, isWebFamily } from '../clients.ts';
import type { Innertube, Lease } from '../innertube.ts';
import { classifyPlayability } from '../parse/player.ts';
import type { ClientPoTokens } from '../po-tokens/client-tokens.ts';
import { playerBody } from '../requests.ts';
import { outcomeOf } from '../transport.ts';
import type { Logger } from '../types.ts';
import type { AdaptiveLadder, LadderVerdict } from './adaptive-ladder.ts';

/** One playable /player answer and the client that gave it. */
export interface PlayerHit {
  client: string;
  player: unknown;
}

interface PlayersOptions {
  /**
   * For the video's streams (audio), not its captions: clients whose stream URLs need a PO token
   * (`streamsNeedPoToken`: WEB, WEB_EMBEDDED) are skipped, since we carry none on stream URLs.
   */
  streams?: boolean;
}

export class PlayerLadder {
  readonly #innertube: Innertube;
  readonly #ladder: AdaptiveLadder;
  readonly #poTokens: ClientPoTokens;
  readonly #logger: Logger | undefined;

  constructor(innertube: Innertube, ladder: AdaptiveLadder, poTokens: ClientPoTokens, logger?: Logger) {
    this.#innertube = innertube;
    this.#ladder = ladder;
    this.#poTokens = poTokens;
    this.#logger = logger;
  }

  /** Whether a client name is a candidate here (probed by the canaries, served only once adopted). */
  isCandidate(name: string): boolean {
    const config = this.#innertube.config;
    return candidateClients(config.clients, config.captionClients).includes(name);
  }

  /**
   * What a candidate's caption answer told: 'ok' when its caption body answered, 'client_failed'
   * when it was empty or unreadable (which demotes an adopted candidate at once).
   */
  recordCaptions(name: string, verdict: LadderVerdict): void {
    if (this.isCandidate(name)) this.#ladder.record(this.#innertube.client(name), verdict);
  }

  /**
   * Playable /player answers of the caption ladder, in order: adopted candidates first (as yt-dlp
   * asks `tv_samsung` first), then the configured clients. Definitive errors (private, members-only,
   * ...) stop at once. A session-level block (bot check, page reload, unexplained sign-in, "try again
   * later") is retried once on a fresh session, then the next client is asked; an IP-level one (429,
   * captcha) ends the ladder, since the transport has already tried every egress address. "Not found" from one client is confirmed by another
   * before VIDEO_NOT_FOUND. When every client fails: a block wins (retryable), then a client-specific
   * unavailability, then a confirmed or sole not-found, then the first transport error.
   *
   * Adopted candidates marked `fallbackForUnplayable` (IOS_PRODUCER) are asked last, and only when a
   * client of the ladder answered the video unplayable and none answered with a block: the
   * made-for-kids videos the logged-out clients refuse.
   */
  async *players(videoId: string, lease: Lease, options: PlayersOptions = {}): AsyncGenerator<PlayerHit> {
    const config = this.#innertube.config;
    const usable = (n: string) => !(options.streams && this.#innertube.client(n).streamsNeedPoToken);
    const configured = config.captionClients.filter(usable);
    const adopted = candidateClients(config.clients, config.captionClients).filter(
      (n) => usable(n) && this.#ladder.isAdopted(this.#innertube.client(n)),
    );
    const isFallback = (n: string) => this.#innertube.client(n).fallbackForUnplayable === true;
    const byIdentity = new Map(
      [...adopted.filter((n) => !isFallback(n)), ...configured].map((n) => [this.#innertube.client(n), n]),
    );
    const ladder = this.#ladder.order([...byIdentity.keys()]).map((c) => byIdentity.get(c)!);
    const fallbacks = adopted.filter(isFallback);
    const candidates = new Set(adopted);
    let blocked: AppError | undefined;
    let unavailable: AppError | undefined;
    let notFound: AppError | undefined;
    let notFoundVotes = 0;
    let failed: AppError | undefined;
    let freshSessionTried = false;
    let yielded = false;
    for (const name of [...ladder, ...fallbacks]) {
      // a fallback only for a video some client answered unplayable, and none with a block
      if (fallbacks.includes(name) && (blocked !== undefined || unavailable === undefined)) break;
      const client = this.#innertube.client(name);
      const web = isWebFamily(client);
      if (web && this.#poTokens.configured) void this.#poTokens.get(videoId).catch(() => undefined);
      for (;;) {
        let player: unknown;
        try {
          player = await this.#innertube.post('player', name, playerBody(videoId, web, client), {
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
          // a candidate is proven by its caption bodies, not by a playable answer (recordCaptions)
          if (!candidates.has(name)) this.#ladder.record(client, 'ok');
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
}

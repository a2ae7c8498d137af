import type { Logger } from '../types.ts';

/**
 * The InnerTube calls a listing makes, bound by the client to one visitor session and the WEB client
 * (`YouTubeClient.#innertube()`), so that listings reuse the client's transport, sessions, version healing
 * and circuit breaker without reaching into it.
 */
export interface InnertubeCalls {
  /** POST /youtubei/v1/browse with this body (browseId + params, or continuation). */
  browse(body: Record<string, unknown>): Promise<unknown>;
  /** POST /youtubei/v1/navigation/resolve_url for this platform URL. */
  resolveUrl(url: string): Promise<unknown>;
  logger?: Logger | undefined;
}

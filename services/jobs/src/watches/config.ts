/** The watches' variables, a fragment of the gateway's ConfigSchema (src/config.ts). */
import { TOPICS } from '@subx/contracts';
import { durationMs, intBetween, nameString } from '@subx/service-kit';

export const watchesEnv = {
  /** How often a gateway looks for watches that are due. */
  WATCHES_POLL_MS: durationMs.default(30_000),
  /** A run's hold on its watch: another replica takes a watch over only after it lapses. */
  WATCH_LEASE_MS: durationMs.default(300_000),
  /** Newest videos a run lists from its source (a run finds at most this many new videos). */
  WATCH_LIST_MAX: intBetween(1, 1_000).default(100),
  /** Listing a watch's source, every continuation up to WATCH_LIST_MAX. */
  WATCH_LISTING_TIMEOUT_MS: durationMs.default(60_000),
  /**
   * How long a video whose captions were missing is handed to later runs' jobs again (0: never),
   * counted from the run that first found it.
   */
  WATCH_CAPTION_RETRY_HOURS: intBetween(0, 720).default(48),
  /** Watch lifecycle events (docs/events.md). */
  WATCH_EVENTS_TOPIC: nameString.default(TOPICS.watchEvents.default),
};

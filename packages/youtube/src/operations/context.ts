/** What every operation (one module each) runs on: the InnerTube plumbing and the caption ladder. */
import type { Innertube } from '../innertube.ts';
import type { PlayerLadder } from '../ladder/player-ladder.ts';
import type { ClientPoTokens } from '../po-tokens/client-tokens.ts';
import type { Clock, Logger, SegmentTranslator } from '../types.ts';

export interface YouTubeOperations {
  innertube: Innertube;
  players: PlayerLadder;
  poTokens: ClientPoTokens;
  clock: Clock;
  logger: Logger | undefined;
  /** Translates when the platform refuses; undefined: no model configured. */
  translator: SegmentTranslator | undefined;
}

/** The fake's public types: what it records, the failures it injects, its options and its handle. */
import type { SpeechAudio } from './audio.ts';
import type { SyntheticChannelSpec } from './channels.ts';
import type { FixtureRef } from './fixtures.ts';
import type { RouteTable } from './routes.ts';
import type { PlaylistShape } from './today.ts';

export type Endpoint =
  | 'player'
  | 'next'
  | 'browse'
  | 'resolve_url'
  | 'search'
  | 'timedtext'
  | 'visitor_id'
  | 'sw_js_data'
  | 'watch'
  | 'videoplayback'
  | 'other';

export type FakeMode = 'today' | 'replay';

export interface RecordedRequest {
  method: string;
  path: string;
  endpoint: Endpoint;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  body?: unknown;
  clientName?: string;
  clientVersion?: string;
  /** Header `X-Goog-Visitor-Id`, else `context.client.visitorData`. */
  visitorData?: string;
  videoId?: string;
  continuation?: string;
  browseId?: string;
  status: number;
}

export type Failure =
  | { kind: 'status'; status: number; body?: string }
  | { kind: 'delay'; ms: number }
  | { kind: 'reset' }
  | { kind: 'emptyCaptionBody' }
  | { kind: 'captcha' }
  | { kind: 'botCheck' }
  | { kind: 'differentVideo' }
  // the kinds below answer /player only (unless `endpoint` says otherwise)
  | {
      kind: 'playability';
      status: 'ERROR' | 'UNPLAYABLE' | 'LOGIN_REQUIRED';
      reason: string;
      subreason?: string;
    }
  /** ERROR "The page needs to be reloaded." (a session signal, not unavailability). */
  | { kind: 'pageReload' }
  /** LOGIN_REQUIRED "Sign in to continue": neither age nor privacy. */
  | { kind: 'loginRequired' }
  /** The session rate limit: UNPLAYABLE "Video unavailable" / "This content isn’t available, try again later." */
  | { kind: 'tryAgainLater' }
  /** A /next continuation answered with its page emptied of items (same shape). */
  | { kind: 'emptyCommentsPage' }
  /** A /browse answer with its header and video count but no items and no continuation. */
  | { kind: 'emptyPlaylistPage' };

export interface FailureMatch {
  /** Default: any endpoint, except the kinds that imply one (playability kinds: player, empty pages: next / browse). */
  endpoint?: Endpoint;
  /** context.client.clientName of the request. */
  client?: string;
  /** The request's videoId (player / next body, timedtext `v`). */
  videoId?: string;
  /** Every entry must equal the request's query parameter, e.g. `{ tlang: 'de' }` or `{ fmt: 'json3' }`. */
  query?: Record<string, string>;
  /** How many matching requests fail (default 1). */
  times?: number;
}

export interface FakeYouTubeOptions {
  /** 'today' (default): the platform since late Aug 2026 (README.md). 'replay': as recorded. */
  mode?: FakeMode;
  /** Merged over the default routing table. */
  routes?: Partial<RouteTable>;
  /** Added to every answer (per-endpoint overrides: setLatency(ms, endpoint)). */
  latencyMs?: number;
  fixturesDir?: string;
  /** Today mode: how long a gated (`exp=xpe|xpv`, no `pot`) timedtext GET takes to answer empty (default 2000). */
  gatedCaptionDelayMs?: number;
  /** After this many /player calls with the same visitorData, that visitor gets the bot check on /player. */
  sessionQuota?: number;
  /** A WEB-family player/next/browse with an older context.client.clientVersion answers 400 FAILED_PRECONDITION. */
  minWebClientVersion?: string;
  /** The WEB client version `/sw.js_data` announces (default '2.20261115.01.00'). */
  webClientVersion?: string;
  /** Today mode: first-page shape per playlist id, merged over todayPlaylistShapes(). */
  playlistShapes?: Record<string, PlaylistShape>;
  /** Where to listen (default 127.0.0.1 on a free port); the demo container listens on 0.0.0.0:8079. */
  host?: string;
  port?: number;
  /**
   * Caption bodies of these videos (every track, untranslated) are this many generated cues instead
   * of the recorded or three-cue bodies: answers of a chosen size, for the benchmarks.
   */
  captionCues?: Record<string, number>;
  /**
   * Like the platform since late Nov 2026: every translated caption request (`tlang`) answers an
   * empty 200 body while the source track still answers (FAKE_YT_TLANG=refused in the demo).
   */
  tlangRefused?: boolean;
  /**
   * What the TV client's (TVHTML5) caption URLs answer: `empty` (the default: a 200 with an empty
   * body, as in September 2026's probes of yt-dlp's TV clients) or `answer` (the caption body, like
   * the mobile clients'). Its /player answers like a mobile client's either way: caption URLs without
   * a PO-token gate, no `microformat`.
   */
  tvCaptions?: 'answer' | 'empty';
  /**
   * How the synthetic watch page carries `ytInitialData`: `var` (`var ytInitialData = …;`),
   * `json-script` (`<script id="yt-initial-data" type="application/json">`), or `mixed` (the default:
   * every fifth page the JSON script element, as the platform since October 2026).
   */
  watchPageInitialData?: 'var' | 'json-script' | 'mixed';
  /** Other audio files for the speech video (audio.ts), e.g. a long one for a benchmark. */
  speechAudio?: SpeechAudio;
  /**
   * The audio host's bandwidth: every `/videoplayback` answer is sent at most this many bytes a
   * second (unset: as fast as the socket takes it).
   */
  audioBytesPerSecond?: number;
  /** Told of every `/videoplayback` answer once its last byte was written (benchmarks). */
  onAudioServed?: (served: { bytes: number; startMs: number; endMs: number }) => void;
  /** More generated channels (channels.ts), beside the default synthetic one. */
  syntheticChannels?: SyntheticChannelSpec[];
  /** Where the players' media (audio) URLs point instead of this fake (a test's faulty host). */
  mediaOrigin?: string;
  /** More search first pages by query (search.ts searchPageOf), answered before the recordings. */
  searchPages?: Record<string, FixtureRef>;
}

export interface FakeYouTube {
  url: string;
  requests: RecordedRequest[];
  readonly mode: FakeMode;
  setMode(mode: FakeMode): void;
  /** Requests of one endpoint (or all). */
  count(endpoint?: Endpoint): number;
  /** Latency of every answer, or of one endpoint's answers (overrides the general one). */
  setLatency(ms: number, endpoint?: Endpoint): void;
  setGatedCaptionDelay(ms: number): void;
  setMinWebClientVersion(version: string | undefined): void;
  setWebClientVersion(version: string): void;
  setPlaylistShape(playlistId: string, shape: PlaylistShape): void;
  /**
   * Retire an InnerTube client the way the platform does overnight (VISIONOS on 2026-09-11): from now on
   * every /player as that client answers 400 FAILED_PRECONDITION. `restoreClient` undoes it.
   */
  retireClient(clientName: string): void;
  restoreClient(clientName: string): void;
  /** Every visitorData handed out by /youtubei/v1/visitor_id and /sw.js_data, in order. */
  visitorDataIssued: string[];
  failNext(failure: Failure, match?: FailureMatch): void;
  /** Serve every caption body in this format whatever `fmt` asks (undefined: honour `fmt`). */
  setCaptionFormat(format: 'json3' | 'srv3' | 'srv1' | undefined): void;
  /** Refuse (or again serve) translated caption requests; reset() restores the start option. */
  setTlangRefused(refused: boolean): void;
  /** What the TV client's caption URLs answer from now on; reset() restores the start option. */
  setTvCaptions(mode: 'answer' | 'empty'): void;
  /** Forget recorded requests, pending failures, per-visitor /player counts and issued visitorData. */
  reset(): void;
  routes: RouteTable;
  close(): Promise<void>;
}

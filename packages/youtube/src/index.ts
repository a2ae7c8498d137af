export { YouTubeClient, MAX_COMMENTS, type YouTubeClientDeps } from './client.ts';
export {
  loadYouTubeConfig,
  DEFAULT_CONFIG,
  type YouTubeClientConfig,
  type SessionConfig,
  type BreakerConfig,
} from './config.ts';
export { DEFAULT_CLIENTS, DEFAULT_CAPTION_CLIENTS, isWebFamily, type InnertubeClient } from './clients.ts';
export { CircuitBreaker, sharedBreaker } from './breaker.ts';
export {
  AdaptiveLadder,
  type AdaptiveLadderOptions,
  type ClientHealth,
  type LadderVerdict,
} from './ladder/adaptive-ladder.ts';
export { EgressQuarantine } from './egress/quarantine.ts';
export { Canary, type CanaryOptions, type CanaryProbe } from './canary/canary.ts';
export { parseCanaryVideos, type CanaryVideo } from './canary/videos.ts';
export { PoTokenProvider, type PoTokenHealth } from './po-tokens/provider.ts';
export { playlistContinuation, commentsContinuation } from './tokens.ts';
export type { Session } from './sessions.ts';
export { parseVideoUrl, parsePlaylistUrl, isVideoId } from './url.ts';
export {
  parseTimedText,
  removeRollingRepetition,
  cleanText,
  decodeEntities,
  detectFormat,
} from './parse/timedtext.ts';
export {
  parseCaptionTracks,
  classifyPlayability,
  parsePlayerMetadata,
  toUploadDate,
  type CaptionTrack,
  type CaptionList,
} from './parse/player.ts';
export { parseChapters, parseLikeCount, parseCommentCount, parseCommentsEntry } from './parse/next.ts';
export { parseCommentsPage, type CommentsPage, type CommentThread } from './parse/comments.ts';
export { parsePlaylistPage, type PlaylistPage } from './parse/playlist.ts';
export { parseCount, parseRelativeTime } from './parse/counts.ts';
export { chooseTrack, captionUrl, availableLanguages, type TrackChoice } from './language.ts';
export { rebase } from './transport.ts';
export { isCaptionRefusal } from './operations/transcripts.ts';
export {
  UpstreamStats,
  UPSTREAM_OUTCOMES,
  type UpstreamObserver,
  type UpstreamCall,
  type UpstreamOutcome,
  type UpstreamEndpoint,
  type BreakerState,
} from './observer.ts';
export * from './types.ts';
export {
  parseChannelUrl,
  canonicalChannelUrl,
  CHANNEL_TABS,
  type ChannelTab,
  type ChannelRef,
  type ParsedChannelUrl,
} from './channel/url.ts';
export {
  parseChannelPage,
  parseChannelContinuation,
  parseResolveUrl,
  type ListedVideo,
  type ChannelPage,
} from './channel/parse.ts';
export type { ChannelListing, ChannelListingRequest } from './channel/list.ts';
export {
  LISTING_MAX_VIDEOS,
  LISTING_MAX_PAGES,
  LISTING_DEADLINE_MS,
  type ListingOptions,
} from './listing/collect.ts';
export type { PlaylistListing } from './listing/playlist.ts';
export {
  AUDIO_ONLY_ITAGS,
  AudioFetchError,
  AudioTooLargeError,
  fetchAudioRanged,
  pickAudioFormat,
  type AudioFetchOptions,
  type AudioFormat,
} from './audio/audio.ts';
export type { AudioRequest, VideoAudio } from './operations/audio.ts';
export {
  searchParams,
  SEARCH_TYPES,
  UPLOAD_DATES,
  SEARCH_DURATIONS,
  SEARCH_SORTS,
  SEARCH_FEATURES,
  type SearchType,
  type UploadDate,
  type SearchDuration,
  type SearchSort,
  type SearchFeature,
  type SearchFilters,
} from './search/params.ts';
export {
  parseSearchPage,
  type SearchPage,
  type SearchResult,
  type SearchResultKind,
} from './search/parse.ts';
export {
  SEARCH_QUERY_MAX,
  type SearchRequest,
  type SearchVideos,
  type SearchVideosRequest,
} from './operations/search.ts';

/**
 * What the routes need from the gRPC services, as promise-based interfaces over the ts-proto
 * request/response types. The gRPC adapter (grpc.ts) implements them for production; tests use
 * in-process fakes. Every method rejects with an AppError (codes from @subx/errors).
 */
import type { aiV1, billingV1, commentsV1, extractorV1 } from '@subx/contracts';

export interface CallOptions {
  /** Overrides the adapter's default deadline for this call. */
  deadlineMs?: number;
  /** Aborting cancels the call (batch/playlist items cut off by the request deadline). */
  signal?: AbortSignal;
  /** Propagated as `x-request-id` metadata so logs of every service line up. */
  requestId?: string;
}

export interface HealthCheck {
  /** True when the service answers its gRPC health check with SERVING within `timeoutMs`. */
  checkHealth(timeoutMs: number): Promise<boolean>;
}

export interface ExtractorBackend extends HealthCheck {
  getTranscript(
    request: extractorV1.GetTranscriptRequest,
    options?: CallOptions,
  ): Promise<extractorV1.GetTranscriptResponse>;
  validateVideo(
    request: extractorV1.ValidateVideoRequest,
    options?: CallOptions,
  ): Promise<extractorV1.ValidateVideoResponse>;
  getPlaylist(
    request: extractorV1.GetPlaylistRequest,
    options?: CallOptions,
  ): Promise<extractorV1.GetPlaylistResponse>;
  /** A whole playlist (every continuation up to max_videos), for bulk jobs. */
  listPlaylistVideos(
    request: extractorV1.ListPlaylistVideosRequest,
    options?: CallOptions,
  ): Promise<extractorV1.ListPlaylistVideosResponse>;
  /** One tab of a channel, newest first, up to max_videos, for bulk jobs. */
  listChannelVideos(
    request: extractorV1.ListChannelVideosRequest,
    options?: CallOptions,
  ): Promise<extractorV1.ListChannelVideosResponse>;
  /** One page of search results (GET /api/v1/search). */
  search(request: extractorV1.SearchRequest, options?: CallOptions): Promise<extractorV1.SearchResponse>;
  /**
   * Whether the video platform answers the extractor at all (its PLATFORM_HEALTH_NAME health). An
   * extractor that does not report it, or cannot be asked, counts as answering: that is /health's
   * extractor check, not this one.
   */
  checkPlatform(timeoutMs: number): Promise<boolean>;
  /** The first max_videos videos of a search, for search jobs. */
  listSearchVideos(
    request: extractorV1.ListSearchVideosRequest,
    options?: CallOptions,
  ): Promise<extractorV1.ListSearchVideosResponse>;
}

export interface CommentsBackend extends HealthCheck {
  getComments(
    request: commentsV1.GetCommentsRequest,
    options?: CallOptions,
  ): Promise<commentsV1.GetCommentsResponse>;
}

export interface AiBackend extends HealthCheck {
  summarize(request: aiV1.SummarizeRequest, options?: CallOptions): Promise<aiV1.SummarizeResponse>;
  analyzeComments(
    request: aiV1.AnalyzeCommentsRequest,
    options?: CallOptions,
  ): Promise<aiV1.AnalyzeCommentsResponse>;
}

export interface BillingBackend extends HealthCheck {
  getUsage(request: billingV1.GetUsageRequest, options?: CallOptions): Promise<billingV1.GetUsageResponse>;
}

export interface Backends {
  extractor: ExtractorBackend;
  comments: CommentsBackend;
  ai: AiBackend;
  billing: BillingBackend;
}

export const BACKEND_NAMES = ['extractor', 'comments', 'ai', 'billing'] as const;
export type BackendName = (typeof BACKEND_NAMES)[number];

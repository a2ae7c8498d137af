import type { CommentItem, Transcript } from './domain/types.ts';

/** Where transcripts come from: in production the extractor service over gRPC. */
export interface TranscriptSource {
  /** Rejects with the extractor's AppError (VIDEO_NOT_FOUND, NO_SUBTITLES, ...) unchanged. */
  getTranscript(videoId: string, language: string): Promise<Transcript>;
}

export interface CommentsPage {
  readonly comments: readonly CommentItem[];
  readonly commentsDisabled: boolean;
  /** Comments on the video as the platform reports it; 0 when unknown. */
  readonly totalCount: number;
}

/** Where comments come from: in production the comments service over gRPC. */
export interface CommentSource {
  getComments(videoId: string, options: { max: number; sort: 'top' | 'recent' }): Promise<CommentsPage>;
}

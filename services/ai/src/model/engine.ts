import type {
  AnalysisResult,
  CommentItem,
  SummaryResult,
  SummaryStyle,
  Transcript,
} from '../domain/types.ts';

export interface SummaryEngine {
  /** The `model` value responses carry: a model name, or `local-extractive`. */
  readonly summaryModel: string;
  summarize(input: { transcript: Transcript; style: SummaryStyle }): Promise<SummaryResult>;
}

export interface AnalysisEngine {
  /** The `model` value responses carry: a model name, or `local-lexicon`. */
  readonly analysisModel: string;
  analyze(input: {
    videoId: string;
    title: string;
    language: string;
    sample: readonly CommentItem[];
  }): Promise<AnalysisResult>;
}

/** Both capabilities behind one object, chosen once from configuration. */
export type AiEngine = SummaryEngine & AnalysisEngine;

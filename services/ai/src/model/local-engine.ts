import { analyzeLexicon, LOCAL_ANALYSIS_ENGINE } from '../domain/local-analysis.ts';
import { LOCAL_SUMMARY_ENGINE, summarizeExtractive } from '../domain/local-summarizer.ts';
import type { AiEngine } from './engine.ts';

/** The offline engine: extractive summaries and lexicon analysis, no network, deterministic. */
export function createLocalEngine(): AiEngine {
  return {
    summaryModel: LOCAL_SUMMARY_ENGINE,
    analysisModel: LOCAL_ANALYSIS_ENGINE,
    summarize: async ({ transcript, style }) => ({
      ...summarizeExtractive(transcript, style),
      model: LOCAL_SUMMARY_ENGINE,
    }),
    analyze: async ({ sample, language }) => ({
      ...analyzeLexicon(sample, language),
      model: LOCAL_ANALYSIS_ENGINE,
    }),
  };
}

import { pickQuotes } from './quotes.ts';
import { overallSentiment, scoreComment } from './sentiment.ts';
import { extractThemes } from './themes.ts';
import type { CommentItem, KeyQuote, SentimentLabel } from './types.ts';

export const LOCAL_ANALYSIS_ENGINE = 'local-lexicon';

export interface LexiconAnalysis {
  readonly sentiment: SentimentLabel;
  readonly themes: string[];
  readonly keyQuotes: KeyQuote[];
}

/**
 * Offline comment analysis: AFINN-165 lexicon polarity per comment (the `sentiment` package, with
 * negation and emoji) aggregated by the dominance rule, keyword themes by document frequency, and
 * the most-liked opinionated comments as quotes (which therefore occur in the sample by
 * construction).
 */
export function analyzeLexicon(sample: readonly CommentItem[], language = 'en'): LexiconAnalysis {
  const scored = sample.map(scoreComment);
  const byComment = new Map(scored.map((s) => [s.comment, s.score]));
  return {
    sentiment: overallSentiment(scored).sentiment,
    themes: extractThemes(
      sample.map((c) => c.text),
      language,
    ),
    keyQuotes: pickQuotes(sample, (c) => byComment.get(c) ?? 0),
  };
}

import Sentiment from 'sentiment';
import type { CommentItem, SentimentLabel } from './types.ts';

const analyzer = new Sentiment();

/**
 * Phrases common in video comments whose polarity AFINN misses or gets backwards ("sick" and
 * "insane" praise a video; "clickbait" and "skip" do not). Added on top of AFINN-165.
 */
const EXTRAS: Record<string, number> = {
  clickbait: -3,
  misleading: -2,
  boring: -2,
  unwatchable: -3,
  overrated: -2,
  underrated: 2,
  insane: 2,
  sick: 2,
  goat: 3,
  banger: 3,
  masterpiece: 4,
  informative: 2,
  helpful: 2,
  helped: 2,
  finally: 1,
  thanks: 2,
  thank: 2,
  subscribed: 2,
  unsubscribed: -3,
  disliked: -2,
  cringe: -2,
  mid: -1,
  ads: -1,
  sponsor: -1,
  muffled: -2,
  laggy: -2,
};

export interface CommentPolarity {
  readonly comment: CommentItem;
  /** AFINN score normalised by token count, as `sentiment` reports it. */
  readonly comparative: number;
  readonly score: number;
  readonly label: 'positive' | 'negative' | 'neutral';
}

/** A comment counts as opinionated only past a small threshold, so one mild word does not decide. */
const COMPARATIVE_THRESHOLD = 0.05;

export function scoreComment(comment: CommentItem): CommentPolarity {
  const r = analyzer.analyze(comment.text, { extras: EXTRAS });
  const label =
    r.score > 0 && r.comparative >= COMPARATIVE_THRESHOLD
      ? 'positive'
      : r.score < 0 && r.comparative <= -COMPARATIVE_THRESHOLD
        ? 'negative'
        : 'neutral';
  return { comment, comparative: r.comparative, score: r.score, label };
}

export interface SentimentVerdict {
  readonly sentiment: SentimentLabel;
  readonly positive: number;
  readonly negative: number;
  readonly neutral: number;
}

/**
 * Overall sentiment of a sample. A side "clearly dominates" when it has at least twice the comments
 * of the other side and at least 30% of all comments (neutral ones included); anything else,
 * including a sample of mostly neutral comments, is `mixed` (docs/decisions.md "Outputs": mixed also
 * when neither clearly dominates).
 */
export function overallSentiment(scored: readonly CommentPolarity[]): SentimentVerdict {
  const positive = scored.filter((s) => s.label === 'positive').length;
  const negative = scored.filter((s) => s.label === 'negative').length;
  const neutral = scored.length - positive - negative;
  const total = Math.max(scored.length, 1);
  const dominates = (a: number, b: number): boolean => a >= 2 * b && a / total >= 0.3 && a > 0;
  const sentiment: SentimentLabel = dominates(positive, negative)
    ? 'positive'
    : dominates(negative, positive)
      ? 'negative'
      : 'mixed';
  return { sentiment, positive, negative, neutral };
}

import { groundTimestamps } from './timestamps.ts';
import { segmentTopics, labelSection } from './topics.ts';
import { segmentTranscript } from './sentences.ts';
import type { Sentence } from './sentences.ts';
import { centrality, selectDiverse } from './textrank.ts';
import { contentTokens, lightStem, tidySentence, tokenize, truncateAtWord } from './text.ts';
import { tfidfVectors } from './vectors.ts';
import { MIN_TIMESTAMP_VIDEO_SECONDS } from './types.ts';
import type { SummaryStyle, TimestampItem, Transcript } from './types.ts';

export const LOCAL_SUMMARY_ENGINE = 'local-extractive';

export interface ExtractiveSummary {
  readonly summary: string;
  readonly timestamps: TimestampItem[];
}

const MAX_BULLET_CHARS = 220;

/** Word budget of the detailed paragraph: grows with the video, within readable bounds. */
function detailedWordBudget(durationSeconds: number): number {
  return Math.round(Math.min(320, Math.max(120, 110 + (durationSeconds / 60) * 8)));
}

/**
 * Offline extractive summary: sentences are recovered from the captions, ranked by TextRank
 * centrality (with a small bonus for words of the title), picked with MMR to avoid repeats, and
 * presented in video order. Timestamps mark topic shifts found by lexical cohesion, each labelled
 * with its distinctive terms and illustrated by its most central sentence.
 */
export function summarizeExtractive(transcript: Transcript, style: SummaryStyle): ExtractiveSummary {
  const sentences = segmentTranscript(transcript.segments);
  if (sentences.length === 0) {
    return { summary: 'The transcript of this video contains no speech to summarise.', timestamps: [] };
  }
  const language = transcript.language;
  const tokens = sentences.map((s) => contentTokens(s.text, language).map(lightStem));
  const vectors = tfidfVectors(tokens);
  const titleTerms = new Set(contentTokens(transcript.title, language).map(lightStem));
  const base = centrality(vectors);
  const scores = base.map((score, i) => {
    const words = tokenize(sentences[i]!.text).length;
    const overlap = tokens[i]!.filter((t) => titleTerms.has(t)).length;
    // Fragments make poor summary sentences, and rambling ones read badly when lifted out.
    const lengthFactor = words < 6 ? 0.3 : words > 45 ? 0.7 : 1;
    return score * lengthFactor * (1 + 0.15 * Math.min(overlap, 3));
  });

  const surfaceOf = surfaceForms(sentences, language);
  const duration = transcript.duration > 0 ? transcript.duration : lastEnd(sentences);
  const sections = segmentTopics(sentences, vectors, duration);
  const sectionTokens = sections.map((sec) => tokens.slice(sec.from, sec.to));
  const bestInSection = sections.map((sec) => {
    let best = sec.from;
    for (let i = sec.from; i < sec.to; i++) if (scores[i]! > scores[best]!) best = i;
    return best;
  });

  let timestamps: TimestampItem[] = [];
  if (duration >= MIN_TIMESTAMP_VIDEO_SECONDS && sections.length >= 2) {
    const proposed = sections.map((sec, k) => ({
      seconds: sec.start,
      topic: labelSection(sectionTokens[k]!, sectionTokens, surfaceOf) || `Part ${k + 1}`,
      text: tidySentence(withoutLeadingFiller(sentences[bestInSection[k]!]!.text)),
    }));
    timestamps = groundTimestamps(proposed, transcript.segments, duration);
  }

  const show = (i: number): string => tidySentence(withoutLeadingFiller(sentences[i]!.text));
  let summary: string;
  if (style === 'brief') {
    let chars = 0;
    const picked = selectDiverse(scores, vectors, (i, sofar) => {
      if (sofar.length >= 3) return false;
      if (sofar.length >= 2 && chars + sentences[i]!.text.length > 420) return false;
      chars += sentences[i]!.text.length;
      return true;
    });
    summary = picked
      .sort((a, b) => a - b)
      .map(show)
      .join(' ');
  } else if (style === 'detailed') {
    const budget = detailedWordBudget(duration);
    let words = 0;
    const picked = selectDiverse(scores, vectors, (i, sofar) => {
      const w = tokenize(sentences[i]!.text).length;
      if (sofar.length >= 3 && words + w > budget) return false;
      words += w;
      return true;
    });
    summary = picked
      .sort((a, b) => a - b)
      .map(show)
      .join(' ');
  } else {
    // One point per topic when the video has enough of them; otherwise the most central sentences.
    let points = sections.length >= 3 ? [...bestInSection] : [];
    if (points.length < 3) {
      points = selectDiverse(scores, vectors, (_, sofar) => sofar.length < Math.min(6, sentences.length));
    }
    // One line per distinct point: a line said twice (a chorus, a repeated caption) is one point.
    const bullets = new Map<string, string>();
    for (const i of [...new Set(points)].sort((a, b) => a - b)) {
      const bullet = truncateAtWord(show(i), MAX_BULLET_CHARS);
      const key = tokenize(bullet).join(' ').toLowerCase();
      if (!bullets.has(key)) bullets.set(key, `- ${bullet}`);
    }
    summary = [...bullets.values()].join('\n');
  }
  return { summary, timestamps };
}

/** "and um so we..." or "... and" reads badly in a lifted-out sentence. */
function withoutLeadingFiller(text: string): string {
  const trimmed = text
    .replace(/^(?:(?:and|um+|uh+|uhm|erm|yeah)\b[\s,]*)+/iu, '')
    // A sentence cut by the length cap can end on a dangling connective ("... five years and").
    .replace(/(?:[\s,]+\b(?:and|or|but|so|um+|uh+|the|a|an|of|to|with|because|if|under|for))+$/iu, '');
  return trimmed || text;
}

function lastEnd(sentences: readonly Sentence[]): number {
  return sentences.reduce((m, s) => Math.max(m, s.end), 0);
}

/** Maps a stem back to its commonest spelling in the transcript, for readable labels. */
function surfaceForms(sentences: readonly Sentence[], language: string): (stem: string) => string {
  const counts = new Map<string, Map<string, number>>();
  for (const s of sentences) {
    for (const token of contentTokens(s.text, language)) {
      const stem = lightStem(token);
      const forms = counts.get(stem) ?? new Map<string, number>();
      forms.set(token, (forms.get(token) ?? 0) + 1);
      counts.set(stem, forms);
    }
  }
  return (stem) =>
    [...(counts.get(stem)?.entries() ?? [])].sort(
      (a, b) => b[1] - a[1] || a[0].localeCompare(b[0]),
    )[0]?.[0] ?? stem;
}

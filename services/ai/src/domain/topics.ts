import type { Sentence } from './sentences.ts';
import { cosine, sumVectors } from './vectors.ts';
import type { TermVector } from './vectors.ts';

export interface TopicSection {
  /** Indexes into the sentence list, [from, to). */
  readonly from: number;
  readonly to: number;
  readonly start: number;
}

/**
 * Topic boundaries by lexical cohesion (TextTiling, Hearst 1997): the similarity of the blocks of
 * sentences either side of each gap is computed and smoothed; a gap sitting in a deep valley of that
 * curve is where the vocabulary changes, i.e. where a new topic starts. The deepest valleys are kept,
 * about one per 90 seconds of video (at most `maxSections`), no two closer than `minSpacingSeconds`.
 */
export function segmentTopics(
  sentences: readonly Sentence[],
  vectors: readonly TermVector[],
  durationSeconds: number,
  options: { maxSections?: number; minSpacingSeconds?: number } = {},
): TopicSection[] {
  const n = sentences.length;
  if (n === 0) return [];
  const maxSections = options.maxSections ?? 10;
  const wanted = Math.max(1, Math.min(maxSections, Math.round(durationSeconds / 90)));
  const minSpacing = options.minSpacingSeconds ?? Math.max(30, durationSeconds / (wanted * 2.5));
  const block = Math.max(2, Math.min(6, Math.round(n / 30)));

  // gap g sits between sentence g-1 and g.
  const raw: number[] = new Array<number>(n).fill(1);
  for (let g = 1; g < n; g++) {
    const left = sumVectors(vectors.slice(Math.max(0, g - block), g));
    const right = sumVectors(vectors.slice(g, Math.min(n, g + block)));
    raw[g] = cosine(left, right);
  }
  const smooth = raw.map((_, g) => {
    if (g === 0) return 1;
    const window = [raw[g - 1], raw[g], raw[g + 1]].filter(
      (x, k) => x !== undefined && g - 1 + k >= 1,
    ) as number[];
    return window.reduce((a, b) => a + b, 0) / window.length;
  });
  const depth = smooth.map((s, g) => {
    if (g === 0) return 0;
    let left = s;
    for (let i = g - 1; i >= 1 && smooth[i]! >= left; i--) left = smooth[i]!;
    let right = s;
    for (let i = g + 1; i < n && smooth[i]! >= right; i++) right = smooth[i]!;
    // Speakers pause (and editors cut) where the subject changes: a silence before the sentence
    // deepens its valley a little, never enough to make a boundary of a pause alone.
    const pauseBonus = 0.05 * Math.min(sentences[g]!.pauseBefore, 3);
    return left - s + (right - s) + pauseBonus;
  });

  const first = sentences[0]!.start;
  const last = sentences[n - 1]!.end;
  const candidates = depth
    .map((d, g) => ({ g, d }))
    .filter(({ g, d }) => g > 0 && d > 0.02)
    .filter(
      ({ g }) =>
        sentences[g]!.start - first >= minSpacing * 0.5 && last - sentences[g]!.start >= minSpacing * 0.5,
    )
    .sort((a, b) => b.d - a.d || a.g - b.g);
  const cuts: number[] = [];
  for (const { g } of candidates) {
    if (cuts.length >= wanted - 1) break;
    const t = sentences[g]!.start;
    if (cuts.every((c) => Math.abs(sentences[c]!.start - t) >= minSpacing)) cuts.push(g);
  }
  cuts.sort((a, b) => a - b);
  const bounds = [0, ...cuts, n];
  const sections: TopicSection[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    const from = bounds[i]!;
    sections.push({ from, to: bounds[i + 1]!, start: sentences[from]!.start });
  }
  return sections;
}

/**
 * A short label for a section: its most distinctive terms against the other sections (term weight
 * in the section × how few sections use the term), as a phrase when two of them occur side by side.
 */
export function labelSection(
  sectionTokens: readonly (readonly string[])[],
  allSections: readonly (readonly (readonly string[])[])[],
  surface: (stem: string) => string,
): string {
  const sectionCount = allSections.length;
  const sectionDf = new Map<string, number>();
  for (const sec of allSections)
    for (const t of new Set(sec.flat())) sectionDf.set(t, (sectionDf.get(t) ?? 0) + 1);
  const tf = new Map<string, number>();
  for (const t of sectionTokens.flat()) tf.set(t, (tf.get(t) ?? 0) + 1);
  const weight = (t: string): number =>
    (tf.get(t) ?? 0) * Math.log(1 + sectionCount / (sectionDf.get(t) ?? 1));

  const pairCounts = new Map<string, number>();
  for (const tokens of sectionTokens) {
    for (let i = 0; i + 1 < tokens.length; i++) {
      const a = tokens[i]!;
      const b = tokens[i + 1]!;
      if (a !== b) pairCounts.set(`${a} ${b}`, (pairCounts.get(`${a} ${b}`) ?? 0) + 1);
    }
  }
  const ranked = [...tf.keys()].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b));
  const top = ranked.slice(0, 4);
  const pair = [...pairCounts.entries()]
    .filter(([p, c]) => c >= 2 && p.split(' ').every((t) => top.includes(t)))
    .sort((a, b) => b[1] - a[1])[0];
  const words = pair
    ? [...pair[0].split(' '), ...top.filter((t) => !pair[0].split(' ').includes(t)).slice(0, 1)]
    : top.slice(0, 2);
  if (words.length === 0) return '';
  const phrase = pair ? `${surface(words[0]!)} ${surface(words[1]!)}` : surface(words[0]!);
  const rest = pair ? words.slice(2) : words.slice(1);
  const label = rest.length > 0 ? `${phrase} and ${rest.map(surface).join(' and ')}` : phrase;
  return label.charAt(0).toLocaleUpperCase() + label.slice(1);
}

import { cosine, norm, sumVectors } from './vectors.ts';
import type { TermVector } from './vectors.ts';

/** Above this many sentences the O(n²) graph is replaced by centroid similarity (O(n)). */
const MAX_GRAPH_SENTENCES = 1200;

/**
 * Centrality of each sentence. TextRank (Mihalcea & Tarau 2004): PageRank over the graph whose
 * edge weights are the cosine similarities of the sentences' TF-IDF vectors. Very long transcripts
 * use similarity to the document centroid instead, which ranks similarly at linear cost.
 */
export function centrality(vectors: readonly TermVector[], damping = 0.85, iterations = 50): number[] {
  const n = vectors.length;
  if (n === 0) return [];
  const norms = vectors.map((v) => norm(v));
  if (n > MAX_GRAPH_SENTENCES) {
    const centroid = sumVectors(vectors);
    const nc = norm(centroid);
    return vectors.map((v, i) => cosine(v, centroid, norms[i], nc));
  }
  const weights: number[][] = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  const outSum = new Array<number>(n).fill(0);
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const w = cosine(vectors[i]!, vectors[j]!, norms[i], norms[j]);
      if (w > 0) {
        weights[i]![j] = w;
        weights[j]![i] = w;
        outSum[i]! += w;
        outSum[j]! += w;
      }
    }
  }
  let scores = new Array<number>(n).fill(1 / n);
  for (let iter = 0; iter < iterations; iter++) {
    const next = new Array<number>(n).fill((1 - damping) / n);
    for (let j = 0; j < n; j++) {
      const out = outSum[j]!;
      if (out === 0) {
        // A sentence sharing no terms with any other spreads its rank evenly (dangling node).
        for (let i = 0; i < n; i++) next[i]! += (damping * scores[j]!) / n;
        continue;
      }
      const row = weights[j]!;
      for (let i = 0; i < n; i++) {
        const w = row[i]!;
        if (w > 0) next[i]! += (damping * scores[j]! * w) / out;
      }
    }
    const delta = next.reduce((d, x, i) => d + Math.abs(x - scores[i]!), 0);
    scores = next;
    if (delta < 1e-6) break;
  }
  return scores;
}

/**
 * Maximal marginal relevance: picks `count` items by score while penalising similarity to items
 * already picked, so a summary does not repeat one point in three phrasings.
 */
export function selectDiverse(
  scores: readonly number[],
  vectors: readonly TermVector[],
  accept: (index: number, picked: readonly number[]) => boolean,
  lambda = 0.7,
): number[] {
  const max = Math.max(...scores, 1e-12);
  const norms = vectors.map((v) => norm(v));
  const picked: number[] = [];
  const remaining = new Set(scores.map((_, i) => i));
  while (remaining.size > 0) {
    let best = -1;
    let bestValue = -Infinity;
    for (const i of remaining) {
      const redundancy = picked.reduce(
        (m, j) => Math.max(m, cosine(vectors[i]!, vectors[j]!, norms[i], norms[j])),
        0,
      );
      const value = lambda * (scores[i]! / max) - (1 - lambda) * redundancy;
      if (value > bestValue) {
        bestValue = value;
        best = i;
      }
    }
    remaining.delete(best);
    if (!accept(best, picked)) break;
    picked.push(best);
  }
  return picked;
}

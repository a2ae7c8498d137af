import { MAX_THEMES } from './types.ts';
import { contentTokens, lightStem } from './text.ts';

interface TermStats {
  documents: number;
  forms: Map<string, number>;
}

function bump(map: Map<string, TermStats>, key: string, form: string, counted: Set<string>): void {
  const stats = map.get(key) ?? { documents: 0, forms: new Map<string, number>() };
  if (!counted.has(key)) {
    stats.documents += 1;
    counted.add(key);
  }
  stats.forms.set(form, (stats.forms.get(form) ?? 0) + 1);
  map.set(key, stats);
}

function commonestForm(stats: TermStats): string {
  return [...stats.forms.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0] ?? '';
}

/**
 * Keyword themes of a set of short texts: content words and adjacent content-word pairs, counted
 * once per text (document frequency, so one ranting comment cannot make a theme), merged by a light
 * stem. A pair that carries at least half of a word's uses replaces the word. A theme must appear in at
 * least two texts and in at least 5% of them. Returns up to five, most frequent first.
 */
export function extractThemes(texts: readonly string[], language = 'en', max = MAX_THEMES): string[] {
  const unigrams = new Map<string, TermStats>();
  const bigrams = new Map<string, TermStats>();
  for (const text of texts) {
    const tokens = contentTokens(text, language);
    const seenUni = new Set<string>();
    const seenBi = new Set<string>();
    tokens.forEach((token, i) => {
      bump(unigrams, lightStem(token), token, seenUni);
      const next = tokens[i + 1];
      if (next !== undefined && next !== token) {
        bump(bigrams, `${lightStem(token)} ${lightStem(next)}`, `${token} ${next}`, seenBi);
      }
    });
  }
  const minDocs = Math.max(2, Math.ceil(texts.length * 0.05));
  const pairs = [...bigrams.entries()]
    .filter(([, stats]) => stats.documents >= minDocs)
    .map(([key, stats]) => ({ parts: key.split(' '), stats }));
  const words = [...unigrams.entries()]
    .filter(([, stats]) => stats.documents >= minDocs)
    .sort((a, b) => b[1].documents - a[1].documents || a[0].localeCompare(b[0]));
  const covered = new Set<string>();
  const themes: string[] = [];
  for (const [key, stats] of words) {
    if (themes.length >= max) break;
    if (covered.has(key)) continue;
    // A pair that carries at least half of the word's uses says more ("audio quality" > "audio").
    const pair = pairs
      .filter((p) => p.parts.includes(key) && p.stats.documents * 2 >= stats.documents)
      .filter((p) => p.parts.every((part) => part === key || !covered.has(part)))
      .sort((a, b) => b.stats.documents - a.stats.documents)[0];
    if (pair) {
      pair.parts.forEach((part) => covered.add(part));
      themes.push(commonestForm(pair.stats));
    } else {
      covered.add(key);
      themes.push(commonestForm(stats));
    }
  }
  return themes;
}

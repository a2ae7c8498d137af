import { eng as englishStopwords, removeStopwords } from 'stopword';
import * as stopwordLists from 'stopword';

/**
 * Words that carry no topic in spoken transcripts and comments but are missing from general
 * stopword lists (fillers, discourse markers, caption artefacts).
 */
const SPOKEN_FILLERS = [
  'um uh uhm erm hmm mm oh ah yeah yep okay ok like just really actually basically literally gonna',
  'wanna gotta kinda sorta thing things stuff lot lots guys right know mean going get got go let',
  'lets well also can will would could should one two much many even still way make made see say',
  'said think want need look little bit pretty im ive youre dont doesnt didnt isnt thats theres its',
  'cant wont music applause laughter video videos channel watch watching subscribe lol yes no now',
  'here there today every always never something anything everything someone anyone everyone back',
  'first time good great new use used using put take come came people maybe sure though ever us ill',
  'youll weve theyre youve id hes shes wed theyll',
].flatMap((line) => line.split(' '));

/** ISO 639-1 → stopword's ISO 639-3 list names, for the languages it ships. */
const STOPWORD_LANG: Record<string, string> = {
  en: 'eng',
  de: 'deu',
  fr: 'fra',
  es: 'spa',
  it: 'ita',
  pt: 'por',
  nl: 'nld',
  sv: 'swe',
  da: 'dan',
  fi: 'fin',
  pl: 'pol',
  ru: 'rus',
  tr: 'tur',
  cs: 'ces',
  hu: 'hun',
  ro: 'ron',
  el: 'ell',
  id: 'ind',
  ja: 'jpn',
  ko: 'kor',
  zh: 'zho',
  ar: 'ara',
  hi: 'hin',
  vi: 'vie',
  uk: 'ukr',
  no: 'nob',
  nb: 'nob',
};

const stopwordCache = new Map<string, ReadonlySet<string>>();

/** Stopwords for a language (its list plus English and spoken fillers, since captions mix them). */
function stopwordsFor(language = 'en'): ReadonlySet<string> {
  const base = (language.split('-')[0] ?? 'en').toLowerCase();
  const cached = stopwordCache.get(base);
  if (cached) return cached;
  const lists = stopwordLists as unknown as Record<string, unknown>;
  const code = STOPWORD_LANG[base];
  const own = code !== undefined && Array.isArray(lists[code]) ? (lists[code] as string[]) : [];
  const set = new Set<string>([...englishStopwords, ...own, ...SPOKEN_FILLERS].map(foldWord));
  stopwordCache.set(base, set);
  return set;
}

/** Lower case, apostrophes dropped ("don't" → "dont"), so lookups match caption spellings. */
function foldWord(word: string): string {
  return word.toLowerCase().replace(/['’‘`]/g, '');
}

const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}]+)*/gu;

/** Word tokens, folded. Numbers are kept; punctuation and emoji are dropped. */
export function tokenize(text: string): string[] {
  return (text.match(WORD) ?? []).map(foldWord);
}

/** Tokens that can carry a topic: no stopwords, no pure numbers, at least 3 characters. */
export function contentTokens(text: string, language = 'en'): string[] {
  const stop = stopwordsFor(language);
  return removeStopwords(tokenize(text), [...stop]).filter((t) => t.length >= 3 && !/^\d+$/.test(t));
}

/**
 * A light stem so that "video"/"videos" and "explain"/"explained" count as one term. Deliberately
 * conservative: it only has to merge surface forms for counting; labels use the commonest form.
 */
export function lightStem(token: string): string {
  if (token.length <= 4) return token;
  for (const suffix of ['ing', 'edly', 'ed', 'ies', 'es', 's']) {
    if (token.endsWith(suffix) && token.length - suffix.length >= 3) {
      if (suffix === 's' && (token.endsWith('ss') || token.endsWith('us'))) return token;
      const stem = token.slice(0, -suffix.length);
      return suffix === 'ies' ? `${stem}y` : stem;
    }
  }
  return token;
}

export function normalizeWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Caption annotations such as [Music] or (applause) that are not speech. */
export function stripAnnotations(text: string): string {
  return normalizeWhitespace(
    text.replace(/\[[^\]]{0,40}\]|\((?:music|applause|laughter|laughs)\)|♪+/giu, ' '),
  );
}

/**
 * Cuts `text` to at most `max` characters at a word boundary and marks the cut with an ellipsis.
 * Text that fits is returned unchanged (whitespace normalised).
 */
export function truncateAtWord(text: string, max: number): string {
  const clean = normalizeWhitespace(text);
  if (clean.length <= max) return clean;
  const room = clean.slice(0, max - 1);
  const lastSpace = room.lastIndexOf(' ');
  // A single enormous "word" (a URL, a run of emoji) has no boundary: cut it hard.
  const cut = lastSpace >= max * 0.5 ? room.slice(0, lastSpace) : room;
  return `${cut.replace(/[\s,;:.\-–—]+$/u, '')}…`;
}

/** First letter upper case and a closing full stop, for sentences taken from unpunctuated captions. */
export function tidySentence(text: string): string {
  const clean = normalizeWhitespace(text);
  if (clean === '') return clean;
  const capital = clean.charAt(0).toLocaleUpperCase() + clean.slice(1);
  const withI = capital.replace(/\bi\b/g, 'I').replace(/\bi'(m|ve|ll|d)\b/g, "I'$1");
  return /[.!?…]["'”’)]?$/u.test(withI) ? withI : `${withI}.`;
}

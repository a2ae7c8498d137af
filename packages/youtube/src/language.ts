import { Errors } from '@subx/errors';
import type { CaptionList, CaptionTrack } from './parse/player.ts';
import type { SubtitleType } from './types.ts';

/**
 * docs/decisions.md "Inputs": exact manual → exact auto-generated → manual or auto-generated of the same base
 * language → LANGUAGE_NOT_AVAILABLE; with translate, the platform translates the best track (tlang never equals
 * the source language: "Setting tlang=lang returns damaged subtitles", yt-dlp).
 */

export interface TrackChoice {
  track: CaptionTrack;
  language: string;
  subtitleType: SubtitleType;
  tlang?: string;
  translatedFrom?: string;
  /** `low`: an auto-generated track whose language the video's other signals contradict. */
  languageConfidence?: 'low';
}

/** The language a video is spoken in (`language: "original"`). */
const ORIGINAL_LANGUAGE = 'original';

/** Codes the platform still files some tracks under, both ways (ISO 639 changed them). */
const OLD_CODES: Record<string, string> = {
  he: 'iw',
  iw: 'he',
  id: 'in',
  in: 'id',
  yi: 'ji',
  ji: 'yi',
  fil: 'tl',
  tl: 'fil',
};

const base = (code: string) => code.toLowerCase().split(/[-_]/)[0] as string;

/** `code` and its old or new twin, lower-cased: `he` → [`he`, `iw`]; `he-IL` → [`he-il`, `iw-il`]. */
function spellings(code: string): string[] {
  const lower = code.toLowerCase();
  const [head, ...rest] = lower.split('-');
  const twin = OLD_CODES[head!];
  return twin ? [lower, [twin, ...rest].join('-')] : [lower];
}

/**
 * The track in the language the video is spoken in: the original audio track's default caption
 * track; else the auto-generated track (speech recognition hears the audio); else the only
 * manual language. The answer's `language` is that track's.
 */
function originalTrack(list: CaptionList): CaptionTrack | undefined {
  const byAudio = list.originalTrackIndex === undefined ? undefined : list.tracks[list.originalTrackIndex];
  if (byAudio) return byAudio;
  const asr = list.tracks.find((t) => t.kind === 'asr');
  if (asr) return list.tracks.find((t) => t.kind === 'manual' && t.languageCode === asr.languageCode) ?? asr;
  const manualLanguages = new Set(
    list.tracks.filter((t) => t.kind === 'manual').map((t) => base(t.languageCode)),
  );
  return manualLanguages.size === 1 ? ordered(list.tracks.filter((t) => t.kind === 'manual'))[0] : undefined;
}

/**
 * docs/decisions.md "Translation from the original": the track a translation starts from is one in
 * the video's original language, never a track that is itself a translation (a Chinese manual track
 * of an English video). The original language is the platform's default translation source
 * (`defaultTranslationSourceTrackIndices`), else the original audio track's default caption track,
 * else the auto-generated track's (speech recognition hears the audio). In that language a
 * translatable manual track comes before the auto-generated one. Only a video that states no
 * original language at all falls back to the first translatable track.
 */
function translationSource(list: CaptionList): CaptionTrack | undefined {
  const named =
    (list.translationSourceIndex === undefined ? undefined : list.tracks[list.translationSourceIndex]) ??
    (list.originalTrackIndex === undefined ? undefined : list.tracks[list.originalTrackIndex]);
  if (named?.isTranslatable) return named;
  const stated = named ?? list.tracks.find((t) => t.kind === 'asr');
  const translatable = list.tracks.filter((t) => t.isTranslatable);
  if (!stated) return ordered(translatable.filter((t) => t.kind === 'manual'))[0] ?? translatable[0];
  const original = family(stated.languageCode);
  const same = translatable.filter((t) => family(t.languageCode) === original);
  return ordered(same.filter((t) => t.kind === 'manual'))[0] ?? same[0];
}

/** Unnamed tracks (vssId ".en") before named ones (".en.nP7-2PuUl7o"). */
function ordered(tracks: CaptionTrack[]): CaptionTrack[] {
  const named = (t: CaptionTrack) => (t.vssId.replace(/^a?\./, '').includes('.') ? 1 : 0);
  return [...tracks].sort((a, b) => named(a) - named(b));
}

/** Base language with old codes folded to the new ones (`iw-IL` → `he`). */
function family(code: string): string {
  const b = base(code);
  const twin = OLD_CODES[b];
  return twin && ['iw', 'in', 'ji', 'tl'].includes(b) ? twin : b;
}

/**
 * docs/decisions.md "Distrust of an auto-generated track's language": speech recognition sometimes
 * files a track under the wrong language (an English talk listed as Swedish). An auto-generated
 * track is `low` confidence when the video's stated audio language (its original audio track's
 * default caption track) is another language, or, with no such statement, when the video has manual
 * tracks and none of them is in the auto-generated track's language.
 */
function asrLanguageDoubted(list: CaptionList, track: CaptionTrack): boolean {
  if (track.kind !== 'asr') return false;
  const mine = family(track.languageCode);
  const stated = list.originalTrackIndex === undefined ? undefined : list.tracks[list.originalTrackIndex];
  if (stated) return family(stated.languageCode) !== mine;
  const manual = list.tracks.filter((t) => t.kind === 'manual');
  return manual.length > 0 && !manual.some((t) => family(t.languageCode) === mine);
}

export function availableLanguages(list: CaptionList): { manual: string[]; autoGenerated: string[] } {
  const uniq = (xs: string[]) => [...new Set(xs)];
  return {
    manual: uniq(list.tracks.filter((t) => t.kind === 'manual').map((t) => t.languageCode)),
    autoGenerated: uniq(list.tracks.filter((t) => t.kind === 'asr').map((t) => t.languageCode)),
  };
}

export function allLanguages(list: CaptionList): string[] {
  const avail = availableLanguages(list);
  return [...new Set([...avail.manual, ...avail.autoGenerated])];
}

export function chooseTrack(
  videoId: string,
  list: CaptionList,
  language: string,
  translate = false,
): TrackChoice {
  const choice = chooseTrackOnly(videoId, list, language, translate);
  return !choice.tlang && asrLanguageDoubted(list, choice.track)
    ? { ...choice, languageConfidence: 'low' }
    : choice;
}

function chooseTrackOnly(
  videoId: string,
  list: CaptionList,
  language: string,
  translate: boolean,
): TrackChoice {
  const want = language.toLowerCase();
  const manual = ordered(list.tracks.filter((t) => t.kind === 'manual'));
  const asr = list.tracks.filter((t) => t.kind === 'asr');
  const pick = (t: CaptionTrack, answerAs = t.languageCode): TrackChoice => ({
    track: t,
    language: answerAs,
    subtitleType: t.kind === 'asr' ? 'auto_generated' : 'manual',
  });
  if (want === ORIGINAL_LANGUAGE) {
    const original = originalTrack(list);
    if (original) return pick(original);
    throw Errors.languageNotAvailable(videoId, language, allLanguages(list));
  }
  // An old or new twin of the code asked for finds the track, and the answer keeps the code asked
  // for (`he` finds an `iw` track and answers `he`).
  const names = spellings(want);
  const exact = (t: CaptionTrack) => names.includes(t.languageCode.toLowerCase());
  const bases = new Set(names.map(base));
  const sameBase = (t: CaptionTrack) => bases.has(base(t.languageCode));
  const found = manual.find(exact) ?? asr.find(exact) ?? manual.find(sameBase) ?? asr.find(sameBase);
  if (found) {
    const trackBase = base(found.languageCode);
    const asked = base(language);
    return pick(
      found,
      trackBase === asked
        ? found.languageCode
        : `${language.split(/[-_]/)[0]}${found.languageCode.slice(trackBase.length)}`,
    );
  }

  const all = allLanguages(list);
  if (translate) {
    const targets = list.translationLanguages;
    // Since late 2026 some clients list no translation languages at all even where translation
    // works elsewhere: an empty list says nothing, like a missing one (the fetch finds out).
    const target =
      targets === undefined || targets.length === 0
        ? language
        : targets.find((c) => c.toLowerCase() === want);
    const source = translationSource(list);
    if (target && source && base(source.languageCode) !== base(target)) {
      return {
        track: source,
        language: target,
        subtitleType: 'auto_generated',
        tlang: target,
        translatedFrom: source.languageCode,
      };
    }
  }
  throw Errors.languageNotAvailable(videoId, language, all);
}

/** The caption URL with our format, without the positioning flag (xosf) and with the translation target. */
export function captionUrl(baseUrl: string, tlang?: string, fmt = 'json3'): string {
  const abs = /^https?:\/\//i.test(baseUrl) ? baseUrl : `https://www.youtube.com${baseUrl}`;
  const u = new URL(abs);
  u.searchParams.delete('fmt');
  u.searchParams.delete('xosf');
  u.searchParams.delete('tlang');
  u.searchParams.set('fmt', fmt);
  if (tlang) u.searchParams.set('tlang', tlang);
  return u.toString();
}

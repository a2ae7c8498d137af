import { describe, expect, it } from 'vitest';
import { chooseTrack } from './language.ts';
import { parseCaptionTracks } from './parse/player.ts';
import type { CaptionList, CaptionTrack } from './parse/player.ts';

const track = (languageCode: string, kind: 'manual' | 'asr' = 'manual'): CaptionTrack => ({
  languageCode,
  kind,
  name: languageCode,
  vssId: `${kind === 'asr' ? 'a' : ''}.${languageCode}`,
  baseUrl: `https://www.youtube.com/api/timedtext?v=x&lang=${languageCode}&kind=${kind}`,
  isTranslatable: true,
  requiresPoToken: false,
});
const list = (tracks: CaptionTrack[], extra: Partial<CaptionList> = {}): CaptionList => ({
  tracks,
  translationLanguages: undefined,
  ...extra,
});
const choose = (l: CaptionList, language: string) => {
  const c = chooseTrack('aaaaaaaaaaa', l, language);
  return [c.track.languageCode, c.track.kind, c.language];
};

describe('language: "original"', () => {
  it('takes the original audio track’s default caption track', () => {
    const l = list([track('en'), track('fr'), track('fr', 'asr')], { originalTrackIndex: 1 });
    expect(choose(l, 'original')).toEqual(['fr', 'manual', 'fr']);
  });

  it('else the language speech recognition heard (its manual twin first), else the only manual one', () => {
    expect(choose(list([track('en'), track('fr', 'asr')]), 'original')).toEqual(['fr', 'asr', 'fr']);
    expect(choose(list([track('en'), track('fr'), track('fr', 'asr')]), 'original')).toEqual([
      'fr',
      'manual',
      'fr',
    ]);
    expect(choose(list([track('fr'), track('fr-CA')]), 'original')).toEqual(['fr', 'manual', 'fr']);
  });

  it('is LANGUAGE_NOT_AVAILABLE when nothing says which language is spoken', () => {
    expect(() => chooseTrack('aaaaaaaaaaa', list([track('en'), track('de')]), 'original')).toThrow(
      expect.objectContaining({ code: 'LANGUAGE_NOT_AVAILABLE' }),
    );
  });

  it('reads the default audio track’s caption index from a player answer', () => {
    const parsed = parseCaptionTracks({
      captions: {
        playerCaptionsTracklistRenderer: {
          captionTracks: [
            { baseUrl: '/api/timedtext?lang=en', languageCode: 'en' },
            { baseUrl: '/api/timedtext?lang=fr&kind=asr', languageCode: 'fr', kind: 'asr' },
          ],
          audioTracks: [{ captionTrackIndices: [0, 1], defaultCaptionTrackIndex: 1 }],
          defaultAudioTrackIndex: 0,
        },
      },
    });
    expect(parsed.originalTrackIndex).toBe(1);
    expect(chooseTrack('aaaaaaaaaaa', parsed, 'original').language).toBe('fr');
  });
});

describe('old and new codes', () => {
  it('finds a track filed under the old code, answering in the code asked for', () => {
    expect(choose(list([track('iw')]), 'he')).toEqual(['iw', 'manual', 'he']);
    expect(choose(list([track('he')]), 'iw')).toEqual(['he', 'manual', 'iw']);
    expect(choose(list([track('tl', 'asr')]), 'fil')).toEqual(['tl', 'asr', 'fil']);
    expect(choose(list([track('iw-IL')]), 'he')).toEqual(['iw-IL', 'manual', 'he-IL']);
  });

  it('keeps regional and script codes', () => {
    expect(choose(list([track('es-419'), track('es')]), 'es-419')).toEqual(['es-419', 'manual', 'es-419']);
    expect(choose(list([track('pt-BR')]), 'pt-BR')).toEqual(['pt-BR', 'manual', 'pt-BR']);
    expect(choose(list([track('zh-Hans'), track('zh-Hant')]), 'zh-Hant')).toEqual([
      'zh-Hant',
      'manual',
      'zh-Hant',
    ]);
  });
});

describe('translate', () => {
  const translated = (l: CaptionList, language: string) => chooseTrack('aaaaaaaaaaa', l, language, true);

  it('an empty translation list says nothing (clients list none today): the fetch finds out', () => {
    const c = translated(list([track('en')], { translationLanguages: [] }), 'fr');
    expect(c).toMatchObject({ tlang: 'fr', translatedFrom: 'en', language: 'fr' });
  });

  it('a list that names other targets only is LANGUAGE_NOT_AVAILABLE', () => {
    expect(() => translated(list([track('en')], { translationLanguages: ['de'] }), 'fr')).toThrow(
      /not available in 'fr'/,
    );
  });
});

describe('distrust of an auto-generated track’s language', () => {
  const confidence = (l: CaptionList, language: string) =>
    chooseTrack('aaaaaaaaaaa', l, language).languageConfidence;

  it('is low when the stated audio language is another one (an English talk filed as Swedish)', () => {
    const l = list([track('en'), track('sv', 'asr')], { originalTrackIndex: 0 });
    expect(confidence(l, 'sv')).toBe('low');
    expect(confidence(l, 'en')).toBeUndefined();
  });

  it('is low when manual tracks exist and none is in the auto-generated track’s language', () => {
    expect(confidence(list([track('en'), track('de'), track('sv', 'asr')]), 'sv')).toBe('low');
  });

  it('is trusted when the signals agree, old codes included, or when nothing else is said', () => {
    expect(confidence(list([track('en-GB'), track('en', 'asr')]), 'en')).toBeUndefined();
    expect(confidence(list([track('he'), track('iw', 'asr')]), 'iw')).toBeUndefined();
    expect(confidence(list([track('sv', 'asr')]), 'sv')).toBeUndefined();
    const stated = list([track('sv', 'asr')], { originalTrackIndex: 0 });
    expect(confidence(stated, 'sv')).toBeUndefined();
  });

  it('never marks a manual track', () => {
    expect(
      confidence(list([track('de'), track('sv', 'asr')], { originalTrackIndex: 1 }), 'de'),
    ).toBeUndefined();
  });
});

describe('translation from the original track', () => {
  const source = (l: CaptionList) => chooseTrack('aaaaaaaaaaa', l, 'de', true).translatedFrom;
  const zhFirst = [track('zh'), track('en'), track('ja')];

  it('the platform’s default translation source first, whatever is listed before it', () => {
    expect(source(list(zhFirst, { translationSourceIndex: 1 }))).toBe('en');
  });

  it('else the original audio track’s caption track, else the auto-generated track’s language', () => {
    expect(source(list(zhFirst, { originalTrackIndex: 1 }))).toBe('en');
    expect(source(list([track('zh'), track('en', 'asr')]))).toBe('en');
    // in the original language a manual track comes before the auto-generated one
    const both = list([track('zh'), track('en', 'asr'), track('en')]);
    expect(chooseTrack('aaaaaaaaaaa', both, 'de', true).track).toMatchObject({
      languageCode: 'en',
      kind: 'manual',
    });
  });

  it('a stated original that cannot be translated gives way to a translatable track of its language, never to a translation', () => {
    const fixed = { ...track('en'), isTranslatable: false };
    expect(source(list([track('zh'), fixed, track('en', 'asr')], { translationSourceIndex: 1 }))).toBe('en');
    expect(() => source(list([track('zh'), fixed], { translationSourceIndex: 1 }))).toThrow(/not available/i);
  });

  it('only a video that states no original at all falls back to the first translatable track', () => {
    expect(source(list(zhFirst))).toBe('zh');
  });

  it('reads defaultTranslationSourceTrackIndices from the player answer', () => {
    const player = {
      captions: {
        playerCaptionsTracklistRenderer: {
          captionTracks: zhFirst.map((t) => ({
            baseUrl: t.baseUrl,
            languageCode: t.languageCode,
            isTranslatable: true,
          })),
          defaultTranslationSourceTrackIndices: [1],
        },
      },
    };
    expect(parseCaptionTracks(player).translationSourceIndex).toBe(1);
    expect(source(parseCaptionTracks(player))).toBe('en');
  });
});

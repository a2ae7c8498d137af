/** Transcripts: the caption ladder's /player, then the caption track and the metadata. */
import { AppError, Errors } from '@subx/errors';
import { isWebFamily } from '../clients.ts';
import { REFERER, type Lease } from '../innertube.ts';
import type { PlayerHit } from '../ladder/player-ladder.ts';
import { allLanguages, captionUrl, chooseTrack, type TrackChoice } from '../language.ts';
import { captionsPendingOf, parseCaptionTracks } from '../parse/player.ts';
import { TimedTextParseError, parseTimedText } from '../parse/timedtext.ts';
import type { TransportResponse } from '../transport.ts';
import type { Transcript, TranscriptRequest } from '../types.ts';
import type { YouTubeOperations } from './context.ts';
import { maybeNext, metadataFrom } from './metadata.ts';

/**
 * Cold: one /player of the first ladder client that answers (round trip 1), then the timedtext GET and,
 * for the upload date and category the mobile clients lack, a field-masked WEB /player in parallel
 * (round trip 2). /next joins round trip 1 when an opt-in field needs it.
 *
 * An adopted candidate (TV_SAMSUNG) whose caption body comes back empty or unreadable is demoted on the
 * spot and the request starts again without it (once): a candidate's failure never fails a user.
 */
export async function getTranscript(
  yt: YouTubeOperations,
  req: TranscriptRequest,
  candidateFailed = false,
): Promise<Transcript> {
  const { videoId, language } = req;
  const include = req.include ?? [];
  const lease = yt.innertube.lease();
  const nextP = maybeNext(yt, videoId, include, lease);
  try {
    let chosen: { hit: PlayerHit; choice: TrackChoice; pot?: string } | undefined;
    let poTokenNeeded = false;
    let webWithoutCaptions = false;
    for await (const hit of yt.players.players(videoId, lease)) {
      const list = parseCaptionTracks(hit.player);
      const web = isWebFamily(yt.innertube.client(hit.client));
      if (list.tracks.length === 0) {
        // WEB omits `captions` without a signatureTimestamp: it never decides that there are none
        if (web) {
          webWithoutCaptions = true;
          continue;
        }
        // a stream live now or still in processing has no captions *yet*: retryable, not final
        const pending = captionsPendingOf(hit.player);
        throw pending ? Errors.videoProcessing(videoId, pending) : Errors.noSubtitles(videoId);
      }
      const choice = chooseTrack(videoId, list, language, req.translate === true);
      if (choice.track.requiresPoToken) {
        if (yt.poTokens.configured) {
          chosen = { hit, choice, pot: await yt.poTokens.get(videoId) };
          break;
        }
        poTokenNeeded = true;
        yt.logger?.debug({ videoId, client: hit.client }, 'caption URL is gated; next client');
        continue;
      }
      chosen = { hit, choice };
      break;
    }
    if (!chosen) {
      throw poTokenNeeded
        ? captionsRefused(
            Errors.upstreamBlocked('po_token', 'Every client returned caption URLs that need a PO token.'),
          )
        : Errors.upstreamError(
            webWithoutCaptions
              ? 'Only a WEB answer was available and it lists no captions (WEB hides them); retry later.'
              : 'No client returned a usable player response.',
          );
    }
    const { choice, hit, pot } = chosen;
    let answered;
    try {
      answered = await Promise.all([
        choice.tlang
          ? fetchTranslation(yt, videoId, choice, hit, lease, pot, req.signal)
          : fetchCaptions(yt, choice, hit.client, lease, pot, req.words === true).then((s) => ({
              segments: s,
              translatedBy: undefined,
            })),
        metadataFrom(yt, videoId, hit.player, include, nextP, lease),
      ]);
    } catch (err) {
      if (!candidateFailed && yt.players.isCandidate(hit.client) && isCaptionFailure(err)) {
        yt.players.recordCaptions(hit.client, 'client_failed');
        yt.logger?.warn({ videoId, client: hit.client }, 'candidate client gave no captions; demoted');
        return getTranscript(yt, req, true);
      }
      throw isRefusal(err) ? captionsRefused(err) : err;
    }
    const [{ segments, translatedBy }, metadata] = answered;
    yt.players.recordCaptions(hit.client, 'ok');
    return {
      videoId,
      language: choice.language,
      subtitleType: choice.subtitleType,
      ...(choice.translatedFrom ? { translatedFrom: choice.translatedFrom } : {}),
      ...(translatedBy ? { translatedBy } : {}),
      ...(choice.languageConfidence ? { languageConfidence: choice.languageConfidence } : {}),
      segments,
      metadata,
    };
  } finally {
    nextP?.catch(() => undefined);
  }
}

/**
 * Errors that mean the video lists caption tracks and the platform refused us their bodies (a PO
 * token, a bot check, a rate limit on the caption URL): the captions exist, the audio may still be
 * read (mode auto falls back to it; docs/decisions.md "Captions refused, audio allowed").
 */
const refusedCaptions = new WeakSet<AppError>();

function captionsRefused(err: AppError): AppError {
  refusedCaptions.add(err);
  return err;
}

/** Whether getTranscript failed because the platform refused the video's caption tracks. */
export const isCaptionRefusal = (err: unknown): err is AppError =>
  err instanceof AppError && refusedCaptions.has(err);

/** Our own pacing and cool-down are no refusal by the platform: they hold the audio back too. */
const OWN_HOLDS = new Set(['paced', 'cooling_down']);

const isRefusal = (err: unknown): err is AppError =>
  err instanceof AppError &&
  err.code === 'UPSTREAM_BLOCKED' &&
  (err.reason === undefined || !OWN_HOLDS.has(err.reason));

/** An empty or unreadable caption answer: what a candidate client's failure looks like. */
const isCaptionFailure = (err: unknown): boolean =>
  err instanceof AppError &&
  (err.reason === 'empty_caption_body' || err.reason === 'po_token' || err.code === 'UPSTREAM_ERROR');

/**
 * A translated track. Since late 2026 the platform answers most `tlang` requests with an empty body
 * while the source track itself answers: an empty translation is told apart from a blocked client by
 * reading the source. A source that answers means the platform refuses to translate: a configured
 * model translates the source's segments (each keeps its start and duration), else 404
 * LANGUAGE_NOT_AVAILABLE, reason translation_unavailable (never the source passed off as a
 * translation); a source that is empty too is the block it always was.
 */
async function fetchTranslation(
  yt: YouTubeOperations,
  videoId: string,
  choice: TrackChoice,
  hit: PlayerHit,
  lease: Lease,
  pot?: string,
  signal?: AbortSignal,
) {
  try {
    return {
      segments: await fetchCaptions(yt, choice, hit.client, lease, pot),
      translatedBy: 'platform' as const,
    };
  } catch (err) {
    if (!(err instanceof AppError && err.reason === 'empty_caption_body')) throw err;
  }
  const { tlang: _target, ...source } = choice;
  const original = await fetchCaptions(yt, source, hit.client, lease, pot);
  yt.logger?.debug({ videoId, tlang: choice.tlang }, 'the platform refused a caption translation');
  if (yt.translator) {
    const texts = await yt.translator.translate(
      original.map((s) => s.text),
      choice.tlang ?? choice.language,
      signal,
    );
    if (texts.length !== original.length)
      throw Errors.upstreamError('The translation model answered a different number of segments.');
    const segments = original.map((s, i) => ({ ...s, text: texts[i]! }));
    return { segments, translatedBy: 'model' as const };
  }
  throw Errors.translationUnavailable(videoId, choice.language, allLanguages(parseCaptionTracks(hit.player)));
}

/**
 * GET of the caption URL with the answering client's user agent and the watch page as Referer (timedtext
 * requests are fingerprinted). A 429 on a translated track is retried once in another format.
 */
async function fetchCaptions(
  yt: YouTubeOperations,
  choice: TrackChoice,
  client: string,
  lease: Lease,
  pot?: string,
  words = false,
) {
  const get = async (fmt: string) => {
    let url = captionUrl(choice.track.baseUrl, choice.tlang, fmt);
    if (pot) {
      const u = new URL(url);
      u.searchParams.set('pot', pot);
      u.searchParams.set('potc', '1');
      u.searchParams.set('c', yt.innertube.client(client).name);
      url = u.toString();
    }
    return yt.innertube.transport.request({
      method: 'GET',
      url,
      endpoint: 'timedtext',
      client,
      proxy: lease.s.proxy,
      headers: { 'User-Agent': yt.innertube.client(client).userAgent, Referer: REFERER },
      inspect: (res) => {
        if (res.text.trim().length === 0) {
          throw Errors.upstreamBlocked(
            'empty_caption_body',
            'The platform returned an empty caption body (a PO token is required or we are blocked).',
          );
        }
        return undefined;
      },
    });
  };
  let res: TransportResponse;
  try {
    res = await get('json3');
  } catch (err) {
    if (!(choice.tlang && err instanceof AppError && err.reason === 'http_429')) throw err;
    // auto-translated tracks draw 429s; another format sometimes passes (yt-dlp #13770, FreeTube #7711)
    yt.logger?.debug({ tlang: choice.tlang }, 'translated caption 429; trying srv3');
    res = await get('srv3');
  }
  try {
    const asr = choice.track.kind === 'asr';
    // Word times belong to the track's own words: an auto-generated track, not a translation of it.
    return parseTimedText(res.text, { dedupeRolling: asr, words: words && asr && !choice.tlang });
  } catch (err) {
    if (err instanceof TimedTextParseError)
      throw Errors.upstreamError(`Unparseable caption body: ${err.message}`, err);
    throw err;
  }
}

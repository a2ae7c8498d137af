/** GET /api/timedtext: recorded caption bodies, else generated ones, in the asked format. */
import { readSynthetic, type LoadedResponse } from './fixtures.ts';
import { JSON_TYPE } from './responses.ts';
import type { RouteTable } from './routes.ts';
import { genericCues, numberedCues, renderCaptions } from './synthetic.ts';

export interface CaptionSettings {
  /** Every body in this format whatever `fmt` asks (undefined: honour `fmt`). */
  captionFormat: 'json3' | 'srv3' | 'srv1' | undefined;
  /** Videos whose bodies are this many generated cues. */
  captionCues: Record<string, number> | undefined;
  /** Translated requests (`tlang`) answer an empty 200 body, as the platform does today. */
  tlangRefused: boolean;
  /** TVHTML5's caption URLs (`c=TVHTML5`) answer an empty 200 body, as in September 2026's probes. */
  tvCaptionsEmpty: boolean;
}

/** A gated caption URL: it asks for a PO token (`exp=xpe|xpv`) and carries none. */
export const isGated = (url: URL): boolean =>
  /xp[ev]/.test(url.searchParams.get('exp') ?? '') && !url.searchParams.get('pot');

export function timedtext(url: URL, routes: RouteTable, settings: CaptionSettings): LoadedResponse {
  const q = url.searchParams;
  const v = q.get('v') ?? '';
  const lang = q.get('lang') ?? '';
  const asr = q.get('kind') === 'asr';
  const tlang = q.get('tlang') ?? undefined;
  const fmt = settings.captionFormat ?? q.get('fmt');
  const video = routes.videos[v];
  const exp = q.get('exp') ?? '';
  // like YouTube: a PO-token URL without `pot`, an unknown video or a track it does not have → empty 200
  const tvEmpty = settings.tvCaptionsEmpty && q.get('c') === 'TVHTML5';
  if (!video || !lang || (/xp[ev]/.test(exp) && !q.get('pot')) || (tlang && settings.tlangRefused) || tvEmpty)
    return { status: 200, contentType: 'text/html; charset=UTF-8', body: '' };
  const files = video.captions?.[`${asr ? 'a.' : ''}${lang}`];
  const file = tlang
    ? undefined
    : fmt === 'json3'
      ? files?.json3
      : fmt === 'srv3'
        ? files?.srv3
        : files?.srv1;
  const type = fmt === 'json3' ? JSON_TYPE : 'text/xml; charset=UTF-8';
  const cueCount = tlang ? undefined : settings.captionCues?.[v];
  if (cueCount !== undefined)
    return { status: 200, contentType: type, body: renderCaptions(numberedCues(cueCount), fmt) };
  if (file) return { status: 200, contentType: type, body: readSynthetic(file) };
  return { status: 200, contentType: type, body: renderCaptions(genericCues(v, lang, asr, tlang), fmt) };
}

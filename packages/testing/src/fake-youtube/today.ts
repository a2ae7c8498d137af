/**
 * How the platform answers since late Aug 2026 (the fake's `today` mode), as transformations of the recorded
 * answers: WEB-family caption URLs gated by `exp=xpe`, WEB `/player` without `signatureTimestamp` answering
 * without `captions`, clean URLs and no `microformat` for the mobile clients, header-only and flat playlist
 * pages. Plus the synthetic bodies of the failure kinds the recordings do not cover. Nothing here is a
 * recording; every synthetic body carries a `_synthetic` label.
 */

import { lockupViewModel } from './synthetic.ts';

type Json = Record<string, unknown>;

const WEB_FAMILY = new Set(['WEB', 'MWEB', 'WEB_EMBEDDED_PLAYER', 'WEB_REMIX', 'WEB_CREATOR']);

/** WEB, MWEB, WEB_EMBEDDED_PLAYER, WEB_REMIX, WEB_CREATOR and every TVHTML5* client. */
export function isWebFamily(clientName: string | undefined): boolean {
  return !!clientName && (WEB_FAMILY.has(clientName) || clientName.startsWith('TVHTML5'));
}

/** `a` < `b` comparing dotted numbers ("2.20250101.01.00" < "2.20261115.01.00"); missing parts count as 0. */
export function versionLess(a: string, b: string): boolean {
  const pa = a.split('.').map((n) => Number.parseInt(n, 10) || 0);
  const pb = b.split('.').map((n) => Number.parseInt(n, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? 0;
    const y = pb[i] ?? 0;
    if (x !== y) return x < y;
  }
  return false;
}

function captionTracks(player: Json): Json[] {
  const captions = player.captions as
    { playerCaptionsTracklistRenderer?: { captionTracks?: Json[] } } | undefined;
  return captions?.playerCaptionsTracklistRenderer?.captionTracks ?? [];
}

/** Rewrites one query parameter of every caption baseUrl (undefined: delete it). */
function setCaptionParam(player: Json, name: string, value: string | undefined): void {
  for (const track of captionTracks(player)) {
    if (typeof track.baseUrl !== 'string') continue;
    const url = new URL(track.baseUrl, 'https://www.youtube.com');
    if (value === undefined) url.searchParams.delete(name);
    else url.searchParams.set(name, value);
    // keep relative URLs relative, absolute ones absolute
    track.baseUrl = track.baseUrl.startsWith('/') ? url.pathname + url.search : url.toString();
  }
}

/** The TV client (yt-dlp's `tv_samsung`): no subtitle PO-token policy, unlike the WEB family. */
const TV_CLIENT = 'TVHTML5';

/**
 * A `/player` answer as today's platform gives it to `clientName`: WEB family without signatureTimestamp →
 * no `captions` key; WEB family with it → every caption URL carries `exp=xpe`; any other client (TVHTML5
 * included) → caption URLs without `exp` and no `microformat`. TVHTML5's caption URLs also carry
 * `c=TVHTML5` (the caller the platform signs them for), so timedtext can answer them the TV way.
 * Everything else is left as recorded.
 */
export function todayPlayer(
  body: string,
  clientName: string | undefined,
  signatureTimestamp: boolean,
): string {
  const player = JSON.parse(body) as Json;
  if (!player || typeof player !== 'object' || Array.isArray(player)) return body;
  if (clientName === TV_CLIENT) {
    delete player.microformat;
    setCaptionParam(player, 'exp', undefined);
    setCaptionParam(player, 'c', TV_CLIENT);
  } else if (isWebFamily(clientName)) {
    if (!signatureTimestamp) delete player.captions;
    else setCaptionParam(player, 'exp', 'xpe');
  } else {
    delete player.microformat;
    setCaptionParam(player, 'exp', undefined);
  }
  return JSON.stringify(player);
}

export interface Playability {
  status: string;
  reason: string;
  subreason?: string;
}

/** A `/player` answer that only carries a playability status, in the recorded errorScreen shape. */
export function playabilityAnswer(p: Playability, note: string): Json {
  return {
    _synthetic: `SYNTHETIC playability answer (${note}) in the recorded shape; not recorded from YouTube`,
    responseContext: { serviceTrackingParams: [] },
    playabilityStatus: {
      status: p.status,
      reason: p.reason,
      errorScreen: {
        playerErrorMessageRenderer: {
          reason: { runs: [{ text: p.reason }] },
          ...(p.subreason ? { subreason: { runs: [{ text: p.subreason }] } } : {}),
        },
      },
    },
    trackingParams: 'fake',
  };
}

/** Fixed playability answers the recordings lack (yt-dlp #16212, #17389, FreeTube #7209). */
export const PAGE_RELOAD: Playability = { status: 'ERROR', reason: 'The page needs to be reloaded.' };
export const LOGIN_REQUIRED: Playability = { status: 'LOGIN_REQUIRED', reason: 'Sign in to continue' };
/** The session rate limit: yt-dlp prints it as "Video unavailable. This content isn’t available, try again later." */
export const TRY_AGAIN_LATER: Playability = {
  status: 'UNPLAYABLE',
  reason: 'Video unavailable',
  subreason: 'This content isn’t available, try again later.',
};

export const FAILED_PRECONDITION = JSON.stringify({
  error: { code: 400, message: 'Precondition check failed.', status: 'FAILED_PRECONDITION' },
});

// ------------------------------------------------------------------ sessions

/**
 * `GET /sw.js_data` as YouTube.js reads it (Session.ts): `)]}'` + JSON whose `[0][2]` is
 * `[[device_info], api_key]`; device_info[13] = visitorData, [16] = WEB client version, [61] = config info
 * whose last element YouTube.js takes as appInstallData. Other slots are null.
 */
export function swJsData(visitorData: string, webClientVersion: string, apiKey: string): string {
  const deviceInfo: unknown[] = Array.from({ length: 110 }, () => null);
  deviceInfo[0] = 'en';
  deviceInfo[1] = 'US';
  deviceInfo[13] = visitorData;
  deviceInfo[16] = webClientVersion;
  deviceInfo[61] = [null, 'SYNTHETIC-app-install-data'];
  return `)]}'\n${JSON.stringify([['SYNTHETIC sw.js_data', null, [[deviceInfo], apiKey]]])}`;
}

// ------------------------------------------------------------------ playlists

export type PlaylistShape = 'classic' | 'flat' | 'headerOnly';

interface PlaylistItems {
  /** The object whose `contents` holds the items (playlistVideoListRenderer or itemSectionRenderer). */
  holder: { contents: unknown[] };
  section: { contents: unknown[] };
  wrapped: boolean;
}

/** Where the items of a first playlist page live, in the classic (wrapped) or flat shape. */
function firstPageItems(page: Json): PlaylistItems | undefined {
  const tabs = (page.contents as Json | undefined)?.twoColumnBrowseResultsRenderer as
    { tabs?: { tabRenderer?: { content?: Json } }[] } | undefined;
  const sections = (tabs?.tabs?.[0]?.tabRenderer?.content?.sectionListRenderer as Json | undefined)
    ?.contents as { itemSectionRenderer?: { contents: unknown[] } }[] | undefined;
  const section = sections?.[0]?.itemSectionRenderer;
  if (!section || !Array.isArray(section.contents)) return undefined;
  const list = (section.contents[0] as Json | undefined)?.playlistVideoListRenderer as
    { contents?: unknown[] } | undefined;
  if (list && Array.isArray(list.contents))
    return { holder: list as { contents: unknown[] }, section, wrapped: true };
  return { holder: section, section, wrapped: false };
}

const isContinuation = (item: unknown): boolean =>
  !!item &&
  typeof item === 'object' &&
  ('continuationItemRenderer' in item || 'continuationItemViewModel' in item);

/** The items (without the trailing continuation) and the continuation item of a first page. */
function splitFirstPage(page: Json): { items: unknown[]; continuation?: unknown } | undefined {
  const found = firstPageItems(page);
  if (!found) return undefined;
  const all = found.holder.contents;
  const last = all.at(-1);
  return isContinuation(last) ? { items: all.slice(0, -1), continuation: last } : { items: all };
}

interface Text {
  simpleText?: string;
  runs?: { text?: string }[];
}
const textOf = (t: unknown): string | undefined =>
  (t as Text | undefined)?.simpleText ?? (t as Text | undefined)?.runs?.map((r) => r.text ?? '').join('');

/** A recorded playlistVideoRenderer as the lockupViewModel today's flat pages carry. */
function lockupOf(renderer: Json): unknown {
  const channel = textOf(renderer.shortBylineText);
  const duration = textOf(renderer.lengthText);
  return lockupViewModel({
    id: String(renderer.videoId),
    title: textOf(renderer.title) ?? '',
    ...(channel ? { channel } : {}),
    ...(duration ? { duration } : {}),
  });
}

/**
 * The first page in today's flat shape: the items straight in `itemSectionRenderer.contents` (recorded
 * playlistVideoRenderer items converted to lockupViewModel), no playlistVideoListRenderer wrapper.
 */
export function flatFirstPage(page: Json): Json {
  const found = firstPageItems(page);
  if (!found?.wrapped) return page;
  found.section.contents = found.holder.contents.map((item) => {
    const renderer = (item as Json).playlistVideoRenderer as Json | undefined;
    return renderer ? lockupOf(renderer) : item;
  });
  return page;
}

const HEADER_KEYS = [
  'responseContext',
  'header',
  'metadata',
  'microformat',
  'sidebar',
  'alerts',
  'trackingParams',
];

/** The first answer in the header-only shape (what NewPipe's `$fields=sidebar,header,microformat,alerts` gets). */
export function headerOnlyFirstPage(page: Json): Json {
  if (!firstPageItems(page)) return page;
  return Object.fromEntries(Object.entries(page).filter(([k]) => HEADER_KEYS.includes(k)));
}

/** The items page that answers a built first-page continuation, in the recorded reload shape. */
export function builtContinuationPage(playlistId: string, firstPage: Json, start: number): Json | undefined {
  const split = splitFirstPage(firstPage);
  if (!split) return undefined;
  return {
    _synthetic: 'SYNTHETIC answer to a client-built playlist continuation, made of the first page items',
    responseContext: { serviceTrackingParams: [] },
    onResponseReceivedActions: [
      {
        reloadContinuationItemsCommand: {
          targetId: playlistId,
          continuationItems: [
            ...split.items.slice(start),
            ...(split.continuation ? [split.continuation] : []),
          ],
        },
      },
    ],
  };
}

// ------------------------------------------------------------------ empty pages

/**
 * A page of the same shape with every item list emptied (comments and playlist pages): continuationItems
 * of the body (a header slot keeps its header), playlist item lists and comment entity mutations.
 */
export function emptied(page: unknown): unknown {
  const walk = (node: unknown, key?: string): unknown => {
    if (Array.isArray(node)) return node.map((n) => walk(n));
    if (!node || typeof node !== 'object') return node;
    const obj = node as Json;
    if (key === 'reloadContinuationItemsCommand' && obj.slot === 'RELOAD_CONTINUATION_SLOT_HEADER')
      return obj;
    const out: Json = {};
    for (const [k, v] of Object.entries(obj)) {
      if (k === 'continuationItems' || k === 'mutations') out[k] = [];
      else if ((key === 'playlistVideoListRenderer' || key === 'itemSectionRenderer') && k === 'contents')
        out[k] = [];
      else out[k] = walk(v, k);
    }
    return out;
  };
  return walk(page);
}

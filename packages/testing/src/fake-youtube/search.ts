import { readFileSync } from 'node:fs';
import type { FixtureRef, LoadedResponse } from './fixtures.ts';

/**
 * Search on the fake (`POST /youtubei/v1/search`), from the NewPipe search recordings
 * (fixtures-recorded/newpipe/43f8e6e/search, MANIFEST "Search results"):
 * - a first page by its query and the result type its `params` name (field 2 → field 2: 1 video,
 *   2 channel, 3 playlist; none: all). A query recorded for all results only (`test`, `suicide`,
 *   `UCO6AK`) answers that page for any type, as a page of mixed results the client filters; other
 *   filters (date, duration, sort, features) do not change the answer;
 * - a continuation by the token the recording's own request sent; an unknown token gets HTTP 400
 *   INVALID_ARGUMENT, as the platform answers a token it did not issue;
 * - any other query: the platform's "No results found" page (SYNTHETIC body, recorded shape).
 */

const DIR = 'newpipe/43f8e6e/search/';

/**
 * The first page of a search recorded for videos (`sidemen`, 21 results), cut to `videos` with their
 * ids and titles given, in that order, and no continuation: a page whose every result is a video a
 * fake answers for (the demo's search).
 */
export function searchPageOf(videos: readonly { id: string; title: string }[], dir: string): unknown {
  const mock = JSON.parse(readFileSync(`${dir}${DIR}videouploaderavatar/generated_mock_2.json`, 'utf8')) as {
    response: { responseBody: string };
  };
  const page = JSON.parse(mock.response.responseBody) as Record<string, unknown>;
  let placed = false;
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (node === null || typeof node !== 'object') return;
    const section = (node as { itemSectionRenderer?: { contents?: unknown[] } }).itemSectionRenderer;
    if (section?.contents) {
      const recorded = section.contents.filter(
        (item): item is { videoRenderer: Record<string, unknown> } =>
          typeof item === 'object' && item !== null && 'videoRenderer' in item,
      );
      section.contents =
        placed || recorded.length === 0
          ? []
          : videos.map((video, i) => {
              const from = recorded[i % recorded.length]!.videoRenderer;
              const item = JSON.parse(
                JSON.stringify(from).split(String(from.videoId)).join(video.id),
              ) as Record<string, unknown>;
              item.title = { runs: [{ text: video.title }] };
              return { videoRenderer: item };
            });
      if (recorded.length > 0) placed = true;
      return;
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === 'continuationItemRenderer') delete (node as Record<string, unknown>)[key];
      else walk(value);
    }
  };
  walk(page);
  return { _synthetic: 'SYNTHETIC search page: recorded result shapes, the given videos', ...page };
}

/** Recorded searches: the folder of each NewPipe test, with a continuation when one was recorded. */
const RECORDED: { folder: string; continuation: boolean }[] = [
  { folder: 'all', continuation: true },
  { folder: 'channel', continuation: true },
  { folder: 'channelverified', continuation: true },
  { folder: 'crisisresources', continuation: true },
  { folder: 'multipleuploader', continuation: false },
  { folder: 'playlists', continuation: true },
  { folder: 'randomquerynomorepages', continuation: true },
  { folder: 'shortformcontent', continuation: true },
  { folder: 'suggestion', continuation: true },
  { folder: 'videodescription', continuation: true },
  { folder: 'videouploaderavatar', continuation: true },
];

export type FakeSearchType = 'all' | 'video' | 'channel' | 'playlist';

/** The recorded queries by type, so tests name them rather than copy strings. */
export const searchQueries = {
  /** all results (20 videos, shelves, a continuation of 24 videos and a channel); channels; playlists. */
  test: 'test',
  /** videos with a "did you mean: on boarding" correction, two pages. */
  didYouMean: 'on board ing',
  /** videos "including results for: shorts": Shorts and live streams, two pages. */
  shorts: '#shorts',
  /** videos, two pages of 20. */
  sidemen: 'sidemen',
  /** all results: 8 channels and a video, then "No more results". */
  noMorePages: 'UCO6AK',
} as const;

function readVarint(bytes: Uint8Array, at: number): { value: number; next: number } {
  let value = 0;
  let shift = 0;
  let i = at;
  while (i < bytes.length) {
    const b = bytes[i++] as number;
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if ((b & 0x80) === 0) break;
  }
  return { value, next: i };
}

/** The fields of one protobuf message: varints as numbers, length-delimited ones as bytes. */
function fields(bytes: Uint8Array): Map<number, number | Uint8Array> {
  const out = new Map<number, number | Uint8Array>();
  let i = 0;
  while (i < bytes.length) {
    const key = readVarint(bytes, i);
    const num = Math.floor(key.value / 8);
    const wire = key.value % 8;
    if (wire === 0) {
      const v = readVarint(bytes, key.next);
      out.set(num, v.value);
      i = v.next;
    } else if (wire === 2) {
      const len = readVarint(bytes, key.next);
      out.set(num, bytes.subarray(len.next, len.next + len.value));
      i = len.next + len.value;
    } else break;
  }
  return out;
}

/** The result type a search request's `params` names (either base64 alphabet, padding percent-encoded or not). */
export function searchTypeOf(params: unknown): FakeSearchType {
  if (typeof params !== 'string' || params === '') return 'all';
  let bytes: Uint8Array;
  try {
    bytes = Buffer.from(decodeURIComponent(params).replace(/\+/g, '-').replace(/\//g, '_'), 'base64url');
  } catch {
    return 'all';
  }
  const filters = fields(bytes).get(2);
  const type = filters instanceof Uint8Array ? fields(filters).get(2) : undefined;
  return type === 1 ? 'video' : type === 2 ? 'channel' : type === 3 ? 'playlist' : 'all';
}

const key = (query: string, type: FakeSearchType) => `${query.trim().toLowerCase()}\u0000${type}`;

function noResults(query: string): LoadedResponse {
  return {
    status: 200,
    contentType: 'application/json; charset=UTF-8',
    body: JSON.stringify({
      _synthetic: `SYNTHETIC "No results found" search page for ${JSON.stringify(query)} (recorded shape)`,
      responseContext: {},
      estimatedResults: '0',
      contents: {
        twoColumnSearchResultsRenderer: {
          primaryContents: {
            sectionListRenderer: {
              contents: [
                {
                  itemSectionRenderer: {
                    contents: [
                      {
                        backgroundPromoRenderer: {
                          title: { runs: [{ text: 'No results found' }] },
                          bodyText: { runs: [{ text: 'Try different keywords or remove search filters' }] },
                        },
                      },
                    ],
                  },
                },
              ],
            },
          },
        },
      },
    }),
  };
}

/** The router of `search` requests over the recordings in `dir`. */
export function createFakeSearch(o: {
  dir: string;
  load: (ref: FixtureRef) => LoadedResponse;
  /** More first pages by query (any type), answered before the recordings. */
  pages?: Record<string, FixtureRef>;
}): {
  route(body: Record<string, unknown>): LoadedResponse;
} {
  const sent = (file: string) => {
    const mock = JSON.parse(readFileSync(o.dir + file, 'utf8')) as { request: { dataToSend?: number[] } };
    return JSON.parse(Buffer.from(mock.request.dataToSend ?? []).toString('utf8')) as Record<string, unknown>;
  };
  const firstPages = new Map<string, FixtureRef>();
  const continuations = new Map<string, FixtureRef>();
  for (const { folder, continuation } of RECORDED) {
    const first = `${DIR}${folder}/generated_mock_2.json`;
    const body = sent(first);
    if (typeof body.query === 'string')
      firstPages.set(key(body.query, searchTypeOf(body.params)), { file: first });
    if (!continuation) continue;
    const next = `${DIR}${folder}/generated_mock_3.json`;
    const token = sent(next).continuation;
    if (typeof token === 'string') continuations.set(token, { file: next });
  }
  const badToken = (): LoadedResponse => ({
    status: 400,
    contentType: 'application/json; charset=UTF-8',
    body: JSON.stringify({
      error: { code: 400, message: 'Request contains an invalid argument.', status: 'INVALID_ARGUMENT' },
    }),
  });
  return {
    route(body) {
      if (typeof body.continuation === 'string') {
        const ref = continuations.get(body.continuation);
        return ref ? o.load(ref) : badToken();
      }
      const query = typeof body.query === 'string' ? body.query : '';
      const own = o.pages?.[query];
      if (own) return o.load(own);
      const ref = firstPages.get(key(query, searchTypeOf(body.params))) ?? firstPages.get(key(query, 'all'));
      return ref ? o.load(ref) : noResults(query);
    },
  };
}

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Loading of the recorded responses in packages/testing/fixtures-recorded (read-only; MANIFEST.md and NOTICE there). Three storage shapes (MANIFEST.md):
 * NewPipe mocks (request + response, the body a JSON string), raw bodies (.json / .static) and watch-page HTML
 * whose `ytInitialPlayerResponse` / `ytInitialData` are exactly the WEB /player and /next answers.
 */

export function fixturesDir(): string {
  const fromEnv = process.env.SUBX_FIXTURES_DIR;
  if (fromEnv) return fromEnv.endsWith('/') ? fromEnv : `${fromEnv}/`;
  // <repo>/packages/testing/src/fake-youtube/ → <repo>/packages/testing/fixtures-recorded/
  return fileURLToPath(new URL('../../fixtures-recorded/', import.meta.url));
}

function syntheticDir(): string {
  return fileURLToPath(new URL('../../fixtures-synthetic/', import.meta.url));
}

/**
 * A SYNTHETIC copy of a recorded JSON answer for another video: every occurrence of `fromVideoId` in the
 * body (videoDetails.videoId, the caption URLs' `v=`, thumbnails) becomes `videoId`, and a `_synthetic`
 * key says so.
 */
export interface DerivedRef {
  derive: FixtureRef;
  fromVideoId: string;
  videoId: string;
}

/**
 * Where a response comes from: a fixture file (and what to pick out of it), an inline JSON value, or a
 * recording rewritten to another video id.
 */
export type FixtureRef =
  | DerivedRef
  | {
      file: string;
      /**
       * playerResponse: the player inside a reel_item_watch answer; ytInitialPlayerResponse / ytInitialData:
       * a variable of a watch-page HTML; pbj:playerResponse / pbj:response: a part of a ?pbj=1 array.
       */
      pick?:
        | 'playerResponse'
        | 'ytInitialPlayerResponse'
        | 'ytInitialData'
        | 'pbj:playerResponse'
        | 'pbj:response';
      status?: number;
    }
  | { inline: unknown; status?: number };

export interface LoadedResponse {
  status: number;
  body: string;
  contentType: string;
}

const cache = new Map<string, LoadedResponse>();

/**
 * The id of the JSON script element the platform uses instead of the assignment in some page fetches
 * (about one in five since October 2026: `<script id="yt-initial-data" type="application/json">`).
 */
const JSON_SCRIPT_IDS: Record<string, string> = { ytInitialData: 'yt-initial-data' };

/**
 * The JSON object assigned to `name` in an HTML page (string-aware brace matching), or the body of
 * its JSON script element (`<script id="yt-initial-data" type="application/json">` for ytInitialData).
 */
export function extractHtmlVar(html: string, name: string): unknown {
  let at = html.search(new RegExp(`(?:var |window\\[["'])${name}(?:["']\\])?\\s*=\\s*\\{`));
  const scriptId = JSON_SCRIPT_IDS[name];
  if (at < 0 && scriptId) {
    const tag = new RegExp(`<script\\b[^>]*\\bid=["']${scriptId}["'][^>]*>\\s*\\{`).exec(html);
    if (tag) at = tag.index + tag[0].length - 1;
  }
  if (at < 0) throw new Error(`${name} not found in HTML fixture`);
  const start = html.indexOf('{', at);
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = start; i < html.length; i++) {
    const c = html[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return JSON.parse(html.slice(start, i + 1));
  }
  throw new Error(`${name}: unterminated object in HTML fixture`);
}

export function loadFixture(ref: FixtureRef, dir = fixturesDir()): LoadedResponse {
  if ('derive' in ref) {
    const source = loadFixture(ref.derive, dir);
    const body = JSON.parse(source.body.split(ref.fromVideoId).join(ref.videoId)) as Record<string, unknown>;
    return {
      ...source,
      body: JSON.stringify({
        _synthetic: `SYNTHETIC copy of the recorded ${ref.fromVideoId} answer, rewritten to ${ref.videoId}`,
        ...body,
      }),
    };
  }
  if ('inline' in ref) {
    return {
      status: ref.status ?? 200,
      body: JSON.stringify(ref.inline),
      contentType: 'application/json; charset=UTF-8',
    };
  }
  const key = `${dir}|${ref.file}|${ref.pick ?? ''}|${ref.status ?? ''}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const raw = readFileSync(dir + ref.file, 'utf8');
  let status = ref.status ?? 200;
  let body: string;
  let contentType = 'application/json; charset=UTF-8';
  if (ref.file.startsWith('newpipe/')) {
    const mock = JSON.parse(raw) as { response: { responseCode: number; responseBody: string } };
    status = ref.status ?? mock.response.responseCode;
    body = mock.response.responseBody;
    if (ref.pick === 'playerResponse')
      body = JSON.stringify((JSON.parse(body) as { playerResponse?: unknown }).playerResponse ?? {});
  } else if (ref.pick === 'ytInitialPlayerResponse' || ref.pick === 'ytInitialData') {
    body = JSON.stringify(extractHtmlVar(raw, ref.pick));
  } else if (ref.pick === 'pbj:playerResponse' || ref.pick === 'pbj:response') {
    const part = ref.pick.slice(4);
    const arr = JSON.parse(raw) as Record<string, unknown>[];
    body = JSON.stringify(arr.find((p) => part in p)?.[part] ?? {});
  } else {
    body = raw;
    if (/\.html(\.static)?$/.test(ref.file)) contentType = 'text/html; charset=utf-8';
  }
  const loaded = { status, body, contentType };
  cache.set(key, loaded);
  return loaded;
}

export function readSynthetic(name: string): string {
  return readFileSync(syntheticDir() + name, 'utf8');
}

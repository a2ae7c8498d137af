/** Injected failures: which request a queued failure matches, and the answers the simple kinds give. */
import type { LoadedResponse } from './fixtures.ts';
import { JSON_TYPE, json } from './responses.ts';
import {
  LOGIN_REQUIRED,
  PAGE_RELOAD,
  TRY_AGAIN_LATER,
  playabilityAnswer,
  type Playability,
} from './today.ts';
import type { Endpoint, Failure, FailureMatch, RecordedRequest } from './types.ts';

/** The endpoint a failure kind implies when the matcher names none. */
const IMPLIED_ENDPOINT: Partial<Record<Failure['kind'], Endpoint>> = {
  playability: 'player',
  pageReload: 'player',
  loginRequired: 'player',
  tryAgainLater: 'player',
  emptyCommentsPage: 'next',
  emptyPlaylistPage: 'browse',
};

const PLAYABILITY_KINDS: Partial<Record<Failure['kind'], Playability>> = {
  pageReload: PAGE_RELOAD,
  loginRequired: LOGIN_REQUIRED,
  tryAgainLater: TRY_AGAIN_LATER,
};

function matches(m: FailureMatch, failure: Failure, rec: RecordedRequest): boolean {
  const endpoint = m.endpoint ?? IMPLIED_ENDPOINT[failure.kind];
  if (endpoint !== undefined && endpoint !== rec.endpoint) return false;
  if (failure.kind === 'emptyCommentsPage' && rec.continuation === undefined) return false;
  if (m.client !== undefined && m.client !== rec.clientName) return false;
  if (m.videoId !== undefined && m.videoId !== rec.videoId) return false;
  return Object.entries(m.query ?? {}).every(([k, v]) => rec.query[k] === v);
}

interface QueuedFailure {
  failure: Failure;
  match: FailureMatch;
  left: number;
}

/** Failures queued by `failNext`, each taken by the first requests it matches (`times` of them). */
export class FailureQueue {
  readonly #queued: QueuedFailure[] = [];

  push(failure: Failure, match: FailureMatch): void {
    this.#queued.push({ failure, match, left: match.times ?? 1 });
  }

  take(rec: RecordedRequest): Failure | undefined {
    const i = this.#queued.findIndex((f) => matches(f.match, f.failure, rec));
    if (i < 0) return undefined;
    const f = this.#queued[i] as QueuedFailure;
    if (--f.left <= 0) this.#queued.splice(i, 1);
    return f.failure;
  }

  clear(): void {
    this.#queued.length = 0;
  }
}

/**
 * The answer of a failure that replaces the route's answer altogether; undefined for the kinds that
 * change how (reset, delay) or what (emptied pages) the route answers.
 */
export function injectedAnswer(
  failure: Failure | undefined,
  load: (ref: { file: string }) => LoadedResponse,
): LoadedResponse | undefined {
  if (failure?.kind === 'status') {
    return {
      status: failure.status,
      contentType: JSON_TYPE,
      body: failure.body ?? JSON.stringify({ error: { code: failure.status, message: 'injected' } }),
    };
  }
  if (failure?.kind === 'emptyCaptionBody')
    return { status: 200, contentType: 'text/html; charset=UTF-8', body: '' };
  if (failure?.kind === 'captcha') {
    return {
      ...load({ file: 'youtube-transcript-api/85c8594/youtube_too_many_requests.html.static' }),
      contentType: 'text/html; charset=utf-8',
    };
  }
  if (failure?.kind === 'botCheck')
    return load({ file: 'youtube-transcript-api/85c8594/youtube_request_blocked.innertube.json.static' });
  if (failure?.kind === 'differentVideo')
    return load({ file: 'newpipe/9730de2/stream/generatedSubtitles/generated_mock_6.json' });
  if (failure?.kind === 'playability') return json(playabilityAnswer(failure, 'injected'));
  if (failure && PLAYABILITY_KINDS[failure.kind])
    return json(playabilityAnswer(PLAYABILITY_KINDS[failure.kind] as Playability, failure.kind));
  return undefined;
}

/**
 * "Did you mean …?" for a route 404: the operation of the table nearest to the method and path
 * asked for (docs/api.md "Errors"). Paths are compared segment by segment, so a typo inside a
 * segment (`/extracts`), a missing one (`/api/extract`) and a wrong method all cost little, while
 * a path parameter (`{job_id}`) matches any one segment for free. Within a segment the distance is
 * fastest-levenshtein's; the segment-level alignment (with its free parameters) is written here,
 * as no library knows about OpenAPI path templates.
 */
import { distance as editDistance } from 'fastest-levenshtein';

export interface RouteCandidate {
  method: string;
  /** OpenAPI form: `/api/v1/jobs/{job_id}`. */
  path: string;
}

/** What a different method adds to the distance: a near path with the wrong method still wins. */
const METHOD_COST = 1;

const segmentsOf = (path: string) => path.toLowerCase().split('/').filter(Boolean);
const isParameter = (segment: string) => /^\{\w+\}$/.test(segment);

/**
 * Edit distance over segments: replacing one costs their edit distance (nothing for a parameter),
 * adding or dropping one costs its length.
 */
function pathDistance(requested: string, template: string): number {
  const r = segmentsOf(requested);
  const t = segmentsOf(template);
  let previous = [0];
  for (let j = 1; j <= t.length; j++) previous[j] = previous[j - 1]! + t[j - 1]!.length;
  for (let i = 1; i <= r.length; i++) {
    const current = [previous[0]! + r[i - 1]!.length];
    for (let j = 1; j <= t.length; j++) {
      const segment = t[j - 1]!;
      const replace = isParameter(segment) ? 0 : editDistance(r[i - 1]!, segment);
      current[j] = Math.min(
        previous[j]! + r[i - 1]!.length,
        current[j - 1]! + segment.length,
        previous[j - 1]! + replace,
      );
    }
    previous = current;
  }
  return previous[t.length]!;
}

/**
 * The nearest candidate, or null when none is near enough to be what was meant: the path may be
 * off by at most a third of the candidate's length (2 at least), whatever the method.
 */
export function nearestRoute(
  method: string,
  path: string,
  candidates: readonly RouteCandidate[],
): RouteCandidate | null {
  let best: { candidate: RouteCandidate; score: number } | null = null;
  for (const candidate of candidates) {
    const distance = pathDistance(path, candidate.path);
    if (distance > Math.max(2, Math.floor(candidate.path.length / 3))) continue;
    const score = distance + (candidate.method === method.toUpperCase() ? 0 : METHOD_COST);
    if (best === null || score < best.score) best = { candidate, score };
  }
  return best?.candidate ?? null;
}

export interface CanaryVideo {
  id: string;
  language: string;
}

/** A few well-known videos are enough: one is probed per run, in turn. */
export const MAX_CANARY_VIDEOS = 20;

/** CANARY_VIDEOS: comma-separated video ids, each optionally `:language` (default en). */
export function parseCanaryVideos(raw: string | undefined): CanaryVideo[] {
  const videos = (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const [id = '', language = 'en'] = entry.split(':');
      if (!/^[A-Za-z0-9_-]{11}$/.test(id))
        throw new Error(`CANARY_VIDEOS: '${entry}' is not a video id (11 characters)`);
      if (!/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})?$/.test(language)) {
        throw new Error(`CANARY_VIDEOS: '${entry}' has no valid language after the colon`);
      }
      return { id, language };
    });
  if (videos.length > MAX_CANARY_VIDEOS) {
    throw new Error(
      `CANARY_VIDEOS lists ${videos.length} videos; at most ${MAX_CANARY_VIDEOS} (one is probed per run)`,
    );
  }
  return videos;
}

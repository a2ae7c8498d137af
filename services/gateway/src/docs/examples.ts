/**
 * Request examples of the OpenAPI document: what the reference fills its request samples with
 * (the key itself is the `<API_KEY>` placeholder, set in the reference's configuration). A test
 * validates every example against the operation's request schema, so they cannot drift from it.
 */

type Example = { summary: string; value: Record<string, unknown> };

export interface RequestExample {
  /** Named JSON body examples (OpenAPI `examples`); the first is the one samples start with. */
  body?: Record<string, Example>;
  /** One example value per query parameter. */
  query?: Record<string, string | number | boolean>;
}

const VIDEO_URL = 'https://www.youtube.com/watch?v=dQw4w9WgXcQ';
const PLAYLIST_URL = 'https://www.youtube.com/playlist?list=PLFgquLnL59alCl_2TQvOiD5Vgm1hCaGSI';

export const REQUEST_EXAMPLES: Record<string, RequestExample> = {
  extract: {
    body: {
      json: { summary: 'Timed segments as JSON', value: { url: VIDEO_URL, language: 'en' } },
      srt: { summary: 'An SRT document', value: { url: 'https://youtu.be/dQw4w9WgXcQ', format: 'srt' } },
      plainText: {
        summary: 'Plain text with opt-in metadata',
        value: { url: VIDEO_URL, include_timestamps: false, include: ['tags', 'view_count', 'chapters'] },
      },
    },
  },
  batch: {
    body: {
      twoVideos: {
        summary: 'Two videos as SRT',
        value: { urls: [VIDEO_URL, 'https://youtu.be/jNQXAC9IVRw'], format: 'srt' },
      },
    },
  },
  playlist: { query: { url: PLAYLIST_URL, max: 5, format: 'json' } },
  validate: { query: { url: VIDEO_URL } },
  summarize: {
    body: { keyPoints: { summary: 'Key points', value: { video_url: VIDEO_URL, style: 'key_points' } } },
  },
  comments: { query: { url: VIDEO_URL, max: 100, sort: 'time' } },
  createJob: {
    body: {
      urls: {
        summary: 'Video URLs, with a webhook when the job ends',
        value: {
          source: { type: 'urls', urls: [VIDEO_URL, 'https://youtu.be/jNQXAC9IVRw'] },
          format: 'srt',
          webhook_url: 'https://example.com/hooks/subx',
        },
      },
      playlist: {
        summary: 'A whole playlist (every page, up to max)',
        value: { source: { type: 'playlist', url: PLAYLIST_URL, max: 500 }, language: 'en' },
      },
      channel: {
        summary: 'The newest 200 videos of a channel',
        value: {
          source: { type: 'channel', url: 'https://www.youtube.com/@YouTube', tab: 'videos', max: 200 },
        },
      },
    },
  },
  listJobs: { query: { limit: 20 } },
  getJobResults: { query: { limit: 25 } },
  analyzeComments: {
    body: { sample: { summary: 'Analyse 50 comments', value: { video_url: VIDEO_URL, sample_size: 50 } } },
  },
};

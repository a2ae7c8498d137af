/**
 * Request examples of the OpenAPI document: what the reference fills its request samples with
 * (the key itself is the `<API_KEY>` placeholder, set in the reference's configuration). A test
 * validates every example against the operation's request schema, so they cannot drift from it.
 * The videos and the playlist are ones the demo's replay knows (README "Quick start", `npm run
 * demo`), so a sample runs as written there; but for the synthetic-comments one, they are public
 * videos on the real platform too.
 * it3OtbTxQk0 rather than the richer F1xioXWb8CY: the fuzzing run (scripts/schemathesis.sh) reuses
 * example values across operations, and the replay answers the comments of F1xioXWb8CY with an
 * upstream error, while it3OtbTxQk0's comments are turned off (an ordinary 200).
 */
import { DOCUMENT_FORMATS } from '@subx/public-api';

type Example = { summary: string; value: Record<string, unknown> };

export interface RequestExample {
  /** Named JSON body examples (OpenAPI `examples`); the first is the one samples start with. */
  body?: Record<string, Example>;
  /** One example value per query parameter. */
  query?: Record<string, string | number | boolean>;
}

const VIDEO_URL = 'https://www.youtube.com/watch?v=it3OtbTxQk0';
const SHORT_URL = 'https://youtu.be/it3OtbTxQk0';
/** Synthetic comments; no captions, so in a batch it is the failed item beside a success. */
const COMMENTS_URL = 'https://www.youtube.com/watch?v=synthCmnts1';
const OTHER_URL = 'https://youtu.be/synthCmnts1';
const PLAYLIST_URL = 'https://www.youtube.com/playlist?list=PLsubxDemoPlaylist01';

export const REQUEST_EXAMPLES: Record<string, RequestExample> = {
  extract: {
    body: {
      json: { summary: 'Timed segments as JSON', value: { url: VIDEO_URL, language: 'en' } },
      plainText: {
        summary: 'Plain text with opt-in metadata',
        value: { url: VIDEO_URL, include_timestamps: false, include: ['tags', 'view_count', 'chapters'] },
      },
    },
  },
  // POST /api/v1/extract.srt and its siblings: the same body, the path names the format.
  ...Object.fromEntries(
    DOCUMENT_FORMATS.map((format) => [
      `extract${format[0]!.toUpperCase()}${format.slice(1)}`,
      { body: { video: { summary: `The ${format} document of a video`, value: { url: SHORT_URL } } } },
    ]),
  ),
  batch: {
    body: {
      twoVideos: {
        summary: 'Two videos as SRT',
        value: { urls: [VIDEO_URL, OTHER_URL], format: 'srt' },
      },
    },
  },
  playlist: { query: { url: PLAYLIST_URL, max: 4, format: 'json' } },
  validate: { query: { url: SHORT_URL } },
  search: { query: { q: 'how transformers work', type: 'video', sort: 'relevance' } },
  summarize: {
    body: { keyPoints: { summary: 'Key points', value: { url: VIDEO_URL, style: 'key_points' } } },
  },
  comments: { query: { url: COMMENTS_URL, max: 100, sort: 'time' } },
  createKey: {
    body: {
      ciReader: {
        summary: 'A key for a CI system that only reads transcripts, for 90 days, from one network',
        value: {
          name: 'ci reader',
          scopes: ['transcripts:read'],
          expires_at: '2027-03-01T00:00:00Z',
          allowed_cidrs: ['203.0.113.0/24'],
        },
      },
    },
  },
  createWatch: {
    body: {
      channel: {
        summary: 'A channel’s new videos every hour, as SRT, with a webhook',
        value: {
          source: { type: 'channel', url: 'https://www.youtube.com/@YouTube', tab: 'videos' },
          interval_minutes: 60,
          format: 'srt',
          webhook_url: 'https://example.com/hooks/subx',
        },
      },
    },
  },
  createJob: {
    body: {
      urls: {
        summary: 'Video URLs, with a webhook when the job ends',
        value: {
          source: { type: 'urls', urls: [VIDEO_URL, OTHER_URL] },
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
    body: { sample: { summary: 'Analyse 20 comments', value: { url: COMMENTS_URL, sample_size: 20 } } },
  },
  updateAccountRetention: {
    body: {
      shorter: {
        summary: 'Results 3 days, chunks a day, a watch’s history back to its default',
        value: { job_results_days: 3, chunks_days: 1, watch_history_days: null },
      },
    },
  },
};

/**
 * A TypeScript program written as a user of the generated client would write it: the types come
 * from openapi-typescript run over the live /openapi.json (`./schema.d.ts`, generated next to this
 * file by test/system/generated-clients.test.ts, which also type-checks it with `tsc --strict`),
 * the calls go through openapi-fetch with nothing hand-written around it. It calls every operation
 * and every format, and one error of each kind, and fails (exit 1) on the first surprise.
 *
 * Environment: SUBX_BASE (the API), SUBX_KEY (a pro key, sent as `Authorization: Bearer`),
 * SUBX_FREE_KEY (a free key, sent as X-API-Key) and SUBX_FREE_DAILY_LIMIT (its requests per day), SUBX_VIDEO, SUBX_PRIVATE_VIDEO, SUBX_COMMENTS_VIDEO,
 * SUBX_PLAYLIST (ids the platform under test knows).
 */
import { randomUUID } from 'node:crypto';
import createClient from 'openapi-fetch';
import type { components, paths } from './schema.d.ts';

type Schemas = components['schemas'];

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

const video = `https://youtu.be/${env('SUBX_VIDEO')}`;
const privateVideo = `https://youtu.be/${env('SUBX_PRIVATE_VIDEO')}`;
const commentsVideo = `https://www.youtube.com/watch?v=${env('SUBX_COMMENTS_VIDEO')}`;
const playlist = `https://www.youtube.com/playlist?list=${env('SUBX_PLAYLIST')}`;

// The generated client's defaults: a Bearer key, as every generator sends one.
const client = createClient<paths>({
  baseUrl: env('SUBX_BASE'),
  headers: { Authorization: `Bearer ${env('SUBX_KEY')}` },
});
const free = createClient<paths>({
  baseUrl: env('SUBX_BASE'),
  headers: { 'X-API-Key': env('SUBX_FREE_KEY') },
});
const anonymous = createClient<paths>({ baseUrl: env('SUBX_BASE') });

const calls: string[] = [];
function expect(condition: boolean, what: string, detail?: unknown): asserts condition {
  if (!condition) throw new Error(`${what}${detail === undefined ? '' : `: ${JSON.stringify(detail)}`}`);
  calls.push(what);
}

/** An item of a batch or playlist: the union narrows on `success`. */
function describeItem(item: Schemas['BatchItem']): string {
  return item.success ? `${item.video_id} ${item.language}` : `${item.url} ${item.error_code}`;
}

// Open operations.
{
  const { data, response } = await anonymous.GET('/health');
  expect(response.status === 200 && data?.status === 'ok', 'GET /health', data);
  const v1 = await anonymous.GET('/api/v1/health');
  expect(v1.data?.api_version === 'v1', 'GET /api/v1/health', v1.data);
  const head = await anonymous.HEAD('/health');
  expect(head.response.status === 200, 'HEAD /health');
  const headV1 = await anonymous.HEAD('/api/v1/health');
  expect(headV1.response.status === 200, 'HEAD /api/v1/health');
  const valid = await anonymous.GET('/api/v1/validate', { params: { query: { url: video } } });
  const result: Schemas['ValidateResult'] | undefined = valid.data;
  expect(result?.valid === true && result.has_subtitles, 'GET /api/v1/validate', valid.error);
}

// Extract: JSON, then each document format on its own path, read as text.
{
  const { data, error, response } = await client.POST('/api/v1/extract', {
    params: { header: { 'Idempotency-Key': randomUUID() } },
    body: { url: video, include: ['like_count', 'chapters'] },
  });
  const result: Schemas['ExtractResult'] | undefined = data;
  expect(response.status === 200 && (result?.subtitles?.length ?? 0) > 0, 'POST /api/v1/extract', error);
  expect(result?.rate_limit.remaining !== undefined, 'extract: rate_limit', result?.rate_limit);
  const plain = await client.POST('/api/v1/extract', { body: { url: video, include_timestamps: false } });
  expect(typeof plain.data?.text === 'string', 'POST /api/v1/extract (plain text)', plain.error);

  const srt = await client.POST('/api/v1/extract.srt', { body: { url: video }, parseAs: 'text' });
  expect(srt.data?.startsWith('1\n') === true, 'POST /api/v1/extract.srt', srt.data?.slice(0, 80));
  const vtt = await client.POST('/api/v1/extract.vtt', { body: { url: video }, parseAs: 'text' });
  expect(vtt.data?.startsWith('WEBVTT') === true, 'POST /api/v1/extract.vtt', vtt.data?.slice(0, 80));
  const txt = await client.POST('/api/v1/extract.txt', {
    body: { url: video, include_timestamps: false },
    parseAs: 'text',
  });
  expect(
    (txt.data?.length ?? 0) > 0 &&
      txt.response.headers.get('content-type')?.startsWith('text/plain') === true,
    'POST /api/v1/extract.txt',
  );
  const md = await client.POST('/api/v1/extract.md', { body: { url: video }, parseAs: 'text' });
  expect(md.data?.startsWith('# ') === true, 'POST /api/v1/extract.md', md.data?.slice(0, 80));
}

// Batch and playlist: items are BatchItemSuccess | BatchItemFailure.
{
  const { data, error } = await client.POST('/api/v1/batch', {
    body: { urls: [video, privateVideo, 'not a url'], format: 'srt' },
  });
  const results: Schemas['BatchItem'][] = data?.results ?? [];
  const [ok, unavailable, invalid] = results;
  expect(
    ok?.success === true && ok.format === 'srt' && typeof ok.content === 'string',
    'POST /api/v1/batch: success item',
    error,
  );
  expect(
    unavailable?.success === false && unavailable.error_code === 'VIDEO_UNAVAILABLE',
    'batch: failure item',
    unavailable,
  );
  expect(
    invalid?.success === false && invalid.video_id === null && invalid.error_code === 'INVALID_URL',
    'batch: invalid URL item',
    invalid,
  );
  expect(data?.credits_details.successful === 1, 'batch: credits_details', data?.credits_details);
  results.map(describeItem);

  const list = await client.GET('/api/v1/playlist', { params: { query: { url: playlist, max: 2 } } });
  const page: Schemas['PlaylistResult'] | undefined = list.data;
  expect(page?.extracted_count === 2 && page.playlist.total_videos > 0, 'GET /api/v1/playlist', list.error);
}

// Search: results are SearchVideoResult | SearchChannelResult | SearchPlaylistResult, told apart by `type`.
{
  const found = await client.GET('/api/v1/search', { params: { query: { q: 'test', type: 'video' } } });
  const hit: Schemas['SearchResult'] | undefined = found.data?.results[0];
  expect(
    hit?.type === 'video' && hit.video_id.length === 11 && typeof found.data?.next_cursor === 'string',
    'GET /api/v1/search',
    found.error,
  );
  const next = await client.GET('/api/v1/search', {
    params: { query: { q: 'test', type: 'video', cursor: found.data.next_cursor } },
  });
  expect((next.data?.results.length ?? 0) > 0, 'GET /api/v1/search: next_cursor', next.error);
}

// Analysis operations (pro tier).
{
  const summary = await client.POST('/api/v1/summarize', { body: { video_url: video, style: 'key_points' } });
  expect((summary.data?.summary.length ?? 0) > 0, 'POST /api/v1/summarize', summary.error);
  const comments = await client.GET('/api/v1/comments', {
    params: { query: { url: commentsVideo, max: 5, sort: 'time' } },
  });
  const first: Schemas['Comment'] | undefined = comments.data?.comments[0];
  expect(
    typeof first?.author === 'string' && typeof first.likes === 'number',
    'GET /api/v1/comments',
    comments.error,
  );
  const analysis = await client.POST('/api/v1/comments/analyze', {
    body: { video_url: commentsVideo, sample_size: 10 },
  });
  const sentiment: Schemas['CommentAnalysis']['sentiment'] | undefined = analysis.data?.sentiment;
  expect(
    sentiment !== undefined && ['positive', 'negative', 'mixed'].includes(sentiment),
    'POST /api/v1/comments/analyze',
    analysis.error,
  );
}

// Bulk jobs and the webhook secret.
{
  const created = await client.POST('/api/v1/jobs', {
    params: { header: { 'Idempotency-Key': randomUUID() } },
    body: { source: { type: 'urls', urls: [video, privateVideo] } },
  });
  // The 202 job or a dry run's 200 estimate: the union narrows on `job_id`.
  expect(
    created.response.status === 202 && created.data !== undefined && 'job_id' in created.data,
    'POST /api/v1/jobs',
    created.error,
  );
  const jobId = created.data.job_id;
  let job: Schemas['Job'] | undefined = created.data;
  for (let i = 0; i < 300 && job && !['completed', 'failed', 'canceled'].includes(job.status); i++) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    job = (await client.GET('/api/v1/jobs/{job_id}', { params: { path: { job_id: jobId } } })).data;
  }
  expect(job?.status === 'completed' && job.progress.succeeded === 1, 'GET /api/v1/jobs/{job_id}', job);
  const listed = await client.GET('/api/v1/jobs', { params: { query: { limit: 5 } } });
  expect(listed.data?.jobs.some((j) => j.job_id === jobId) === true, 'GET /api/v1/jobs', listed.error);
  const results = await client.GET('/api/v1/jobs/{job_id}/results', {
    params: { path: { job_id: jobId }, query: { limit: 10 } },
  });
  const items: Schemas['JobResultItem'][] = results.data?.results ?? [];
  expect(
    items.length === 2 && items[0]?.index === 0 && items[0].success,
    'GET /api/v1/jobs/{job_id}/results',
    results.data,
  );
  const one = await client.GET('/api/v1/jobs/{job_id}/results/{index}', {
    params: { path: { job_id: jobId, index: 0 } },
  });
  const item = one.data;
  expect(
    typeof item === 'object' && item.success && item.index === 0,
    'GET /api/v1/jobs/{job_id}/results/{index}',
    one.error,
  );
  const failed = await client.GET('/api/v1/jobs/{job_id}/results/{index}', {
    params: { path: { job_id: jobId, index: 1 } },
  });
  expect(
    failed.error?.error.code === 'VIDEO_UNAVAILABLE',
    'a failed job item answers its error',
    failed.error,
  );

  const ended = await client.DELETE('/api/v1/jobs/{job_id}', { params: { path: { job_id: jobId } } });
  expect(
    ended.response.status === 409 && ended.error?.error.code === 'JOB_FINISHED',
    'DELETE /api/v1/jobs/{job_id} (finished)',
    ended.error,
  );
  const running = await client.POST('/api/v1/jobs', {
    body: { source: { type: 'playlist', url: playlist, max: 50 } },
  });
  expect(
    running.data !== undefined && 'job_id' in running.data,
    'POST /api/v1/jobs (playlist)',
    running.error,
  );
  const dry = await client.POST('/api/v1/jobs', {
    body: { dry_run: true, source: { type: 'urls', urls: [video, video, privateVideo] } },
  });
  const estimate: Schemas['JobEstimate'] | undefined =
    dry.data && 'estimate' in dry.data ? dry.data.estimate : undefined;
  expect(
    dry.response.status === 200 && estimate?.items === 2 && estimate.duplicates_removed === 1,
    'POST /api/v1/jobs (dry run)',
    dry.data ?? dry.error,
  );
  const canceled = await client.DELETE('/api/v1/jobs/{job_id}', {
    params: { path: { job_id: running.data.job_id } },
  });
  // Cancel answers the job (200, canceled), or 409 when the job won the race and already ended.
  expect(
    canceled.data?.status === 'canceled' || canceled.error?.error.code === 'JOB_FINISHED',
    'DELETE /api/v1/jobs/{job_id}',
    canceled.error,
  );

  const rotated = await client.POST('/api/v1/webhooks/secret');
  const secret: Schemas['WebhookSecret'] | undefined = rotated.data;
  expect(
    rotated.response.status === 201 && secret?.secret.startsWith('whsec_') === true,
    'POST /api/v1/webhooks/secret',
    rotated.error,
  );
  const current = await client.GET('/api/v1/webhooks/secret');
  expect(current.data?.secret === secret?.secret, 'GET /api/v1/webhooks/secret', current.error);

  const standing = await client.GET('/api/v1/account');
  const account: Schemas['Account'] | undefined = standing.data;
  expect(
    account?.tier === 'pro' && account.operations.summarize.allowed && account.daily_used > 0,
    'GET /api/v1/account',
    standing.error,
  );
}

// One error of each kind, typed: error.error.code is the catalogue's enum.
{
  const unauthorized = await createClient<paths>({
    baseUrl: env('SUBX_BASE'),
    headers: { Authorization: 'Bearer sxk_v1_notAKeyNotAKeyNotAKeyNotAKey00' },
  }).POST('/api/v1/extract', { body: { url: video } });
  const code: Schemas['ErrorCode'] | undefined = unauthorized.error?.error.code;
  expect(
    unauthorized.response.status === 401 && code === 'UNAUTHORIZED',
    '401 UNAUTHORIZED',
    unauthorized.error,
  );
  const invalid = await client.POST('/api/v1/extract', { body: { url: 'dQw4w9WgXcQ' } });
  expect(
    invalid.response.status === 400 && invalid.error?.error.code === 'INVALID_URL',
    '400 INVALID_URL',
    invalid.error,
  );
  const include = await client.POST('/api/v1/extract', {
    // @ts-expect-error: the generated type knows the ten include names; the server says the same.
    body: { url: video, include: ['likes'] },
  });
  expect(
    include.error?.error.code === 'INVALID_INCLUDE' && (include.error.error.valid_fields?.length ?? 0) === 10,
    '400 INVALID_INCLUDE',
    include.error,
  );
  const missing = await client.POST('/api/v1/extract', { body: { url: privateVideo } });
  expect(
    missing.response.status === 404 && missing.error?.error.reason === 'private',
    '404 VIDEO_UNAVAILABLE',
    missing.error,
  );
  const noJob = await client.GET('/api/v1/jobs/{job_id}', {
    params: { path: { job_id: 'job_aaaaaaaaa0123456789abcdef' } },
  });
  expect(
    noJob.response.status === 404 && noJob.error?.error.code === 'JOB_NOT_FOUND',
    '404 JOB_NOT_FOUND',
    noJob.error,
  );
  const tier = await free.POST('/api/v1/summarize', { body: { video_url: video } });
  expect(
    tier.response.status === 403 && tier.error?.error.required_tier === 'pro',
    '403 TIER_REQUIRED',
    tier.error,
  );
  // The free key's daily limit (SUBX_FREE_DAILY_LIMIT requests) runs out: 429 with Retry-After.
  let limited = await free.POST('/api/v1/extract', { body: { url: video } });
  for (let i = 0; i < Number(env('SUBX_FREE_DAILY_LIMIT')) && limited.response.status !== 429; i++) {
    limited = await free.POST('/api/v1/extract', { body: { url: video } });
  }
  expect(
    limited.error?.error.code === 'RATE_LIMITED' && limited.response.headers.get('retry-after') !== null,
    '429 RATE_LIMITED',
    limited.error,
  );
}

console.log(JSON.stringify({ ok: true, checks: calls.length }));

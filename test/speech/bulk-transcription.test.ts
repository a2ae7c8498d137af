/**
 * `mode` on batch and bulk jobs, black-box on the real `npm start` (gateway, the extractor's batch
 * and bulk workers on the in-process bus) against the fake platform, with the real speech engine
 * (services/speech: faster-whisper, Whisper tiny.en): a batch of [the captionless synthSpeech (70 s of speech) with
 * mode auto, a captioned video] answers one transcribed item (`source: "audio"`) and one caption
 * item, and charges exactly the two item prices plus 2 credits for 70 s of audio; a job does the
 * same; with the model failing, the transcribed item fails (retryable TRANSCRIPTION_FAILED) and
 * only the caption item is charged. (The tier rule and the other operations: the gateway's HTTP
 * suite, services/gateway/test/http/transcription-modes.test.ts.)
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordRequirement } from '@subx/testing/engines';
import { startFakeYouTube, videoIds } from '@subx/testing/fake-youtube';
import type { FakeYouTube } from '@subx/testing/fake-youtube';
import { waitFor } from '@subx/testing/wait';
import { startNpmStart, type NpmStartProcess } from '../system/npm-start-process.ts';
import { MODEL_ID, installEngine, ready, startEngine } from './speech-engine.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

const SPEECH = `https://www.youtube.com/watch?v=${videoIds.speechNoCaptions}`;
const CAPTIONED = `https://www.youtube.com/watch?v=${videoIds.manualAndAuto}`;
/** 1 per delivered item, twice, and ceil(70 s / 60) for the transcription. */
const EXPECTED_CREDITS = 1 + 1 + 2;
async function call(system: NpmStartProcess, path: string, body?: unknown, key = system.apiKey) {
  const response = await fetch(`${system.base}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Json };
}

const balance = async (system: NpmStartProcess): Promise<number> =>
  (await call(system, '/api/v1/account')).body.credits_balance as number;

/** The two items: the transcribed one, then the caption one. */
function expectTranscribedAndCaptioned(results: Json[]) {
  expect(results).toHaveLength(2);
  const [speech, captioned] = results;
  expect(speech, JSON.stringify(speech)).toMatchObject({
    success: true,
    video_id: videoIds.speechNoCaptions,
    source: 'audio',
    subtitle_type: 'transcribed',
  });
  const segments = speech!.subtitles as { text: string; start: number; duration: number }[];
  expect(segments.length).toBeGreaterThan(3);
  for (const s of segments) expect(s.start + s.duration).toBeLessThanOrEqual(71);
  expect(captioned).toMatchObject({ success: true, video_id: videoIds.manualAndAuto, source: 'captions' });
  expect(captioned!.subtitle_type).not.toBe('transcribed');
}

describe.skipIf(!ready && !process.env.CI)('mode on batch and jobs, npm start with a speech engine', () => {
  recordRequirement({
    kind: 'tool',
    name: 'speech engine (faster-whisper)',
    ran: ready || !!process.env.CI,
    reason: `services/speech/install.sh failed and TRANSCRIBE_BASE_URL is unset: ${installEngine().error}`,
    enable: 'bash scripts/engines.sh up stt',
  });
  let yt: FakeYouTube;
  let engine: { url: string; child?: ChildProcess };
  let system: NpmStartProcess;
  let broken: NpmStartProcess;

  beforeAll(async () => {
    expect(ready, 'the speech engine can run').toBe(true);
    yt = await startFakeYouTube();
    engine = await startEngine();
    const common = {
      YOUTUBE_BASE_URL: yt.url,
      JOBS_POLL_MS: '100',
      // Room for a real recogniser on a busy machine: 70 s of audio in one item's budget.
      BATCH_TIMEOUT_MS: '110000',
      // The job transcribes the same video again rather than reading the batch's transcript.
      TRANSCRIPT_CACHE_TTL_MS: '1000',
    };
    [system, broken] = await Promise.all([
      startNpmStart({ ...common, TRANSCRIBE_BASE_URL: engine.url, TRANSCRIBE_MODEL: MODEL_ID }),
      startNpmStart({
        ...common,
        TRANSCRIBE_BASE_URL: 'http://127.0.0.1:1/v1',
        TRANSCRIBE_TIMEOUT_MS: '2000',
      }),
    ]);
  }, 180_000);
  afterAll(async () => {
    await system?.stop();
    await broken?.stop();
    engine?.child?.kill('SIGTERM');
    await yt?.close();
  });

  it('a batch: one transcribed item, one caption item, the item prices plus 2 credits for 70 s', async () => {
    const before = await balance(system);
    const res = await call(system, '/api/v1/batch', { urls: [SPEECH, CAPTIONED], mode: 'auto' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expectTranscribedAndCaptioned(res.body.results as Json[]);
    expect(res.body.credits_charged).toBe(EXPECTED_CREDITS);
    expect(res.body.credits_details).toMatchObject({ successful: 2, failed: 0, total_attempted: 2 });
    expect(await balance(system)).toBe(before - EXPECTED_CREDITS);
  }, 150_000);

  it('a job: the same two results, the same charge, the job shows its mode', async () => {
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // the batch's transcript has expired
    const before = await balance(system);
    const created = await call(system, '/api/v1/jobs', {
      source: { type: 'urls', urls: [SPEECH, CAPTIONED] },
      mode: 'auto',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    expect(created.body.mode).toBe('auto');
    const jobId = created.body.job_id as string;
    let job: Json = {};
    await waitFor(
      async () => {
        job = (await call(system, `/api/v1/jobs/${jobId}`)).body;
        return ['completed', 'failed', 'canceled'].includes(job.status as string);
      },
      { timeoutMs: 150_000, intervalMs: 250, message: `job ${jobId} to end` },
    );
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(job.credits_charged).toBe(EXPECTED_CREDITS);
    const results = await call(system, `/api/v1/jobs/${jobId}/results`);
    expectTranscribedAndCaptioned(results.body.results as Json[]);
    expect(await balance(system)).toBe(before - EXPECTED_CREDITS);
  }, 180_000);

  it('the model failing: that item fails retryable and costs nothing; the caption item costs 1', async () => {
    const before = await balance(broken);
    const res = await call(broken, '/api/v1/batch', { urls: [SPEECH, CAPTIONED], mode: 'auto' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [speech, captioned] = res.body.results as Json[];
    expect(speech).toMatchObject({ success: false, error_code: 'TRANSCRIPTION_FAILED' });
    expect(captioned).toMatchObject({ success: true, source: 'captions' });
    expect(res.body.credits_charged).toBe(1);
    expect(await balance(broken)).toBe(before - 1);
  }, 120_000);
});

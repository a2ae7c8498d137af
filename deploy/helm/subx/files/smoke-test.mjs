// The smoke calls of `helm test` (templates/tests/smoke-test.yaml): run by the gateway image's Node
// inside the cluster, against the gateway Service. Node built-ins only (the file is mounted from a
// ConfigMap; nothing else of the image is needed), every call bounded by a timeout.
//
//   SMOKE_GATEWAY_URL     http://<release>-subx-gateway:8080 (required)
//   SMOKE_READY_WAIT_MS   how long GET /health/ready may take to answer 200 (default 60000)
//   SMOKE_TIMEOUT_MS      bound of each other request (default 30000)
//   SMOKE_VIDEO_URL       POST /api/v1/extract of this video (skipped when empty)
//   SMOKE_BATCH_URLS      comma-separated: POST /api/v1/batch of these videos, fanned out over Kafka
//                         to the extractors (skipped when empty); every item must succeed
//   SMOKE_API_KEY         the key for extract and batch (never printed); without it they are skipped
//   SMOKE_API_KEY_SOURCE  where the key comes from (said when it is missing)
//
// Prints one line per check (and per skipped check, with why); exits 0 when all that ran pass, 1 at
// the first failure, with what failed.

const env = process.env;
const base = (env.SMOKE_GATEWAY_URL ?? '').replace(/\/+$/, '');
const readyWaitMs = Number(env.SMOKE_READY_WAIT_MS || 60_000);
const timeoutMs = Number(env.SMOKE_TIMEOUT_MS || 30_000);
const videoUrl = env.SMOKE_VIDEO_URL?.trim() ?? '';
const batchUrls = (env.SMOKE_BATCH_URLS ?? '')
  .split(',')
  .map((u) => u.trim())
  .filter(Boolean);
const apiKey = env.SMOKE_API_KEY?.trim() ?? '';
const apiKeySource = env.SMOKE_API_KEY_SOURCE?.trim() || 'SMOKE_API_KEY';
const READY_POLL_MS = 2_000;
const BODY_EXCERPT_CHARS = 300;

class SmokeFailure extends Error {}

function fail(check, reason) {
  throw new SmokeFailure(`${check}: ${reason}`);
}

/** Why a response failed, from the API's error shape when it has one (never the request's key). */
function describeResponse(status, text) {
  try {
    const error = JSON.parse(text)?.error;
    if (error?.code)
      return `HTTP ${status} ${error.code}: ${error.message ?? ''} (request ${error.request_id ?? '?'})`;
  } catch {
    // not JSON: the excerpt below says what came back
  }
  return `HTTP ${status}: ${text.slice(0, BODY_EXCERPT_CHARS)}`;
}

function parseJson(check, text) {
  try {
    return JSON.parse(text);
  } catch {
    return fail(check, `answer is not JSON: ${text.slice(0, BODY_EXCERPT_CHARS)}`);
  }
}

async function call(check, path, init = {}, bound = timeoutMs) {
  const started = Date.now();
  let response;
  try {
    response = await fetch(`${base}${path}`, { ...init, signal: AbortSignal.timeout(bound) });
  } catch (err) {
    const cause = err?.cause?.code ?? err?.cause?.message ?? err?.message ?? String(err);
    const reason =
      err?.name === 'TimeoutError' ? `no answer within ${bound} ms` : `cannot reach ${base}: ${cause}`;
    fail(check, reason);
  }
  const text = await response.text();
  return { status: response.status, text, ms: Date.now() - started };
}

function post(check, path, body, bound) {
  return call(
    check,
    path,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify(body),
    },
    bound,
  );
}

async function waitReady() {
  const deadline = Date.now() + readyWaitMs;
  let last = 'no answer yet';
  for (;;) {
    const left = deadline - Date.now();
    try {
      const { status, text, ms } = await call(
        'health/ready',
        '/health/ready',
        {},
        Math.max(1, Math.min(left, 5_000)),
      );
      if (status === 200) return `ok   GET /health/ready: 200 (${ms} ms)`;
      last = describeResponse(status, text);
    } catch (err) {
      if (!(err instanceof SmokeFailure)) throw err;
      last = err.message;
    }
    if (Date.now() + READY_POLL_MS > deadline)
      fail('health/ready', `not ready within ${readyWaitMs} ms; last: ${last}`);
    await new Promise((resolve) => setTimeout(resolve, READY_POLL_MS));
  }
}

async function openapi() {
  const check = 'GET /openapi.json';
  const { status, text, ms } = await call(check, '/openapi.json');
  if (status !== 200) fail(check, describeResponse(status, text));
  const doc = parseJson(check, text);
  if (typeof doc.openapi !== 'string' || !doc.paths?.['/api/v1/extract'])
    fail(check, 'not the API document (no openapi version or no /api/v1/extract)');
  return `ok   GET /openapi.json: OpenAPI ${doc.openapi}, ${Object.keys(doc.paths).length} paths (${ms} ms)`;
}

async function keylessExtract() {
  const check = 'POST /api/v1/extract without a key';
  const { status, text, ms } = await call(check, '/api/v1/extract', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'https://youtu.be/aaaaaaaaaaa' }),
  });
  const error = status === 401 ? parseJson(check, text).error : null;
  if (!error?.code || !error.request_id)
    fail(check, `expected 401 in the error shape, got ${describeResponse(status, text)}`);
  return `ok   POST /api/v1/extract without a key: 401 ${error.code} (${ms} ms)`;
}

async function extract() {
  const check = `extract ${videoUrl}`;
  const { status, text, ms } = await post(check, '/api/v1/extract', { url: videoUrl });
  if (status !== 200) fail(check, describeResponse(status, text));
  const body = parseJson(check, text);
  if (!Array.isArray(body.subtitles) || body.subtitles.length === 0) fail(check, 'answer has no subtitles');
  return `ok   POST /api/v1/extract ${body.video_id}: ${body.subtitles.length} segments, language ${body.language} (${ms} ms)`;
}

async function batch() {
  const check = `batch of ${batchUrls.length}`;
  // The gateway gives a batch 60 s (BATCH_TIMEOUT_MS): the bound leaves it room to answer.
  const { status, text, ms } = await post(
    check,
    '/api/v1/batch',
    { urls: batchUrls },
    Math.max(timeoutMs, 75_000),
  );
  if (status !== 200) fail(check, describeResponse(status, text));
  const results = parseJson(check, text).results ?? [];
  if (results.length !== batchUrls.length)
    fail(check, `${results.length} results for ${batchUrls.length} URLs`);
  const failed = results.filter((r) => !r.success);
  if (failed.length) {
    fail(check, failed.map((r) => `${r.url} ${r.error_code}: ${r.error_message}`).join('; '));
  }
  return `ok   POST /api/v1/batch: ${results.length}/${batchUrls.length} videos extracted (${ms} ms)`;
}

async function main() {
  if (!/^https?:\/\/[^/]+/.test(base))
    fail('config', `SMOKE_GATEWAY_URL must be an http(s) URL, got "${base}"`);
  for (const [name, value] of [
    ['SMOKE_READY_WAIT_MS', readyWaitMs],
    ['SMOKE_TIMEOUT_MS', timeoutMs],
  ]) {
    // A bound that is not a number would make the waits below unbounded.
    if (!Number.isFinite(value) || value < 0)
      fail('config', `${name} must be milliseconds, got "${env[name]}"`);
  }
  const checks = [waitReady, openapi, keylessExtract];
  const skipped = [];
  const keyed = [...(videoUrl ? [extract] : []), ...(batchUrls.length ? [batch] : [])];
  if (apiKey) checks.push(...keyed);
  else if (keyed.length) {
    for (const name of [...(videoUrl ? ['extract'] : []), ...(batchUrls.length ? ['batch'] : [])])
      skipped.push(`${name}: no API key in ${apiKeySource} (create it, then run helm test again)`);
  }
  console.log(`smoke: ${checks.length} checks against ${base}`);
  for (const check of checks) console.log(`smoke: ${await check()}`);
  for (const line of skipped) console.log(`smoke: skip ${line}`);
  console.log(`smoke: PASS (${checks.length} checks${skipped.length ? `, ${skipped.length} skipped` : ''})`);
}

main().catch((err) => {
  console.error(`smoke: FAIL ${err instanceof SmokeFailure ? err.message : (err?.stack ?? err)}`);
  process.exitCode = 1;
});

/** Calls the benchmarks make on a running `npm start` (test/system/npm-start-process.ts). */

/** POST /api/v1/extract with `force_refresh`: every call goes to the platform. Throws unless 200. */
export async function coldExtract(
  system: { base: string; apiKey: string },
  videoId: string,
  language: string,
): Promise<void> {
  const res = await fetch(`${system.base}/api/v1/extract`, {
    method: 'POST',
    headers: { 'x-api-key': system.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ url: `https://youtu.be/${videoId}`, language, force_refresh: true }),
  });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`extract of ${videoId} answered ${res.status}: ${body}`);
}

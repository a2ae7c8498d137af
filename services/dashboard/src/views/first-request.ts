/**
 * The first request a person makes with a new key, in curl, JavaScript (fetch) and Python (the
 * standard library's urllib, nothing to install): each runs as written against this gateway's
 * public URL, with a video the platform knows (in `npm run demo`, one the replay has). Values are
 * quoted for their language (shell single quotes; JSON string literals, which JavaScript and
 * Python both read), so no key, URL or video can break out of the snippet.
 */

/** A video to try (`npm run demo`: the ones the replay has), and what it shows. */
export interface SampleVideo {
  id: string;
  shows: string;
}

/** Outside the demo: a public video with English subtitles. */
export const DEFAULT_SAMPLE_VIDEO_ID = 'dQw4w9WgXcQ';

export function videoUrl(id: string): string {
  return `https://www.youtube.com/watch?v=${id}`;
}

export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

export interface FirstRequest {
  curl: string;
  javascript: string;
  python: string;
}

export function firstRequest(apiUrl: string, apiKey: string, video: string): FirstRequest {
  const endpoint = `${apiUrl}/api/v1/extract`;
  const body = JSON.stringify({ url: video });
  const q = (value: string) => JSON.stringify(value);
  return {
    curl: [
      `curl -s -X POST ${shellQuote(endpoint)}`,
      `  -H ${shellQuote(`X-API-Key: ${apiKey}`)}`,
      `  -H 'content-type: application/json'`,
      `  -d ${shellQuote(body)}`,
    ].join(' \\\n'),
    javascript: [
      `// Node.js 18+ (save as first-request.mjs) or a browser console`,
      `const response = await fetch(${q(endpoint)}, {`,
      `  method: 'POST',`,
      `  headers: { 'X-API-Key': ${q(apiKey)}, 'content-type': 'application/json' },`,
      `  body: JSON.stringify({ url: ${q(video)} }),`,
      `});`,
      `console.log(response.status, await response.json());`,
    ].join('\n'),
    python: [
      `# Python 3, standard library only`,
      `import json`,
      `import urllib.request`,
      ``,
      `request = urllib.request.Request(`,
      `    ${q(endpoint)},`,
      `    data=json.dumps({"url": ${q(video)}}).encode(),`,
      `    headers={"X-API-Key": ${q(apiKey)}, "content-type": "application/json"},`,
      `    method="POST",`,
      `)`,
      `with urllib.request.urlopen(request, timeout=60) as response:`,
      `    print(response.status, json.load(response))`,
    ].join('\n'),
  };
}

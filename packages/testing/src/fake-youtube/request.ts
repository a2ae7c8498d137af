/** An incoming request as the fake records it: endpoint, client, visitor, video and continuation. */
import type { IncomingMessage } from 'node:http';
import type { Endpoint, RecordedRequest } from './types.ts';

export function recordedRequest(req: IncomingMessage, raw: string): { rec: RecordedRequest; url: URL } {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  let body: unknown;
  if (raw) {
    try {
      body = JSON.parse(raw);
    } catch {
      body = raw;
    }
  }
  const b = (body ?? {}) as Record<string, unknown>;
  const m = /^\/youtubei\/v1\/(?:navigation\/)?(player|next|browse|visitor_id|resolve_url|search)$/.exec(
    url.pathname,
  );
  const endpoint: Endpoint = m
    ? (m[1] as Endpoint)
    : url.pathname === '/api/timedtext'
      ? 'timedtext'
      : url.pathname === '/sw.js_data'
        ? 'sw_js_data'
        : url.pathname === '/watch'
          ? 'watch'
          : url.pathname === '/videoplayback'
            ? 'videoplayback'
            : 'other';
  const client = (
    b.context as
      { client?: { clientName?: string; clientVersion?: string; visitorData?: string } } | undefined
  )?.client;
  const visitorHeader = req.headers['x-goog-visitor-id'];
  const visitorData =
    (typeof visitorHeader === 'string' && visitorHeader) ||
    (typeof client?.visitorData === 'string' && client.visitorData) ||
    undefined;
  const rec: RecordedRequest = {
    method: req.method ?? 'GET',
    path: url.pathname,
    endpoint,
    query: Object.fromEntries(url.searchParams),
    headers: req.headers,
    ...(body !== undefined ? { body } : {}),
    ...(client?.clientName ? { clientName: client.clientName } : {}),
    ...(typeof client?.clientVersion === 'string' ? { clientVersion: client.clientVersion } : {}),
    ...(visitorData ? { visitorData } : {}),
    ...(typeof b.videoId === 'string'
      ? { videoId: b.videoId }
      : endpoint === 'timedtext' && url.searchParams.get('v')
        ? { videoId: url.searchParams.get('v') as string }
        : {}),
    ...(typeof b.continuation === 'string' ? { continuation: b.continuation } : {}),
    ...(typeof b.browseId === 'string' ? { browseId: b.browseId } : {}),
    status: 0,
  };
  return { rec, url };
}

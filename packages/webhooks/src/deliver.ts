import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { ResolvedWebhookTarget } from './target-policy.ts';
import type { SignedWebhookHeaders } from './sign.ts';

/** How one delivery attempt ended. Only `delivered` (a 2xx) stops the retries. */
export type WebhookAttemptOutcome = 'delivered' | 'http_error' | 'redirect' | 'timeout' | 'network_error';

/** One attempt as the job shows it: enough for a user to see why their endpoint did not take it. */
export interface WebhookAttempt {
  started_at: string;
  duration_ms: number;
  outcome: WebhookAttemptOutcome;
  /** The receiver's HTTP status, null when no response came. */
  status: number | null;
  /** The start of the receiver's answer (or of the network error), for debugging; capped. */
  detail?: string;
}

export interface DeliverWebhookInput {
  target: ResolvedWebhookTarget;
  headers: SignedWebhookHeaders;
  body: string;
  /** Bound on the whole attempt, connection to last byte read. Default 10 000 ms. */
  timeoutMs?: number;
  /** How much of the receiver's answer is read and kept. Default 512 bytes. */
  maxResponseBytes?: number;
  userAgent?: string;
}

/**
 * One POST to the receiver. Connects to the address the target policy checked (never a second DNS
 * answer), never follows a redirect (it could point anywhere, the metadata service included: a 3xx
 * is a failed attempt), reads at most `maxResponseBytes` of the answer and is bounded in time.
 * Never throws: every way it can end is an attempt record.
 */
export function deliverWebhook(input: DeliverWebhookInput): Promise<WebhookAttempt> {
  const timeoutMs = input.timeoutMs ?? 10_000;
  const maxResponseBytes = input.maxResponseBytes ?? 512;
  const { url, address, family } = input.target;
  const startedAt = new Date();
  const t0 = performance.now();
  const pinned: LookupFunction = (_host, options, callback) => {
    // Node asks for every address when it races IPv4 and IPv6 (autoSelectFamily): answer in kind.
    if ((options as { all?: boolean }).all) {
      (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [
        { address, family },
      ]);
    } else callback(null, address, family);
  };
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const body = Buffer.from(input.body);

  return new Promise<WebhookAttempt>((resolve) => {
    let settled = false;
    const finish = (outcome: WebhookAttemptOutcome, status: number | null, detail?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve({
        started_at: startedAt.toISOString(),
        duration_ms: Math.round(performance.now() - t0),
        outcome,
        status,
        ...(detail ? { detail: detail.slice(0, maxResponseBytes) } : {}),
      });
    };
    const req = request(
      {
        method: 'POST',
        protocol: url.protocol,
        hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        lookup: pinned,
        agent: false,
        headers: {
          ...input.headers,
          'content-length': String(body.length),
          'user-agent': input.userAgent ?? 'subx-webhooks/1',
        },
      },
      (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let kept = 0;
        const done = () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (status >= 200 && status < 300) finish('delivered', status, text);
          else if (status >= 300 && status < 400) {
            finish('redirect', status, `redirect to ${res.headers.location ?? '(no location)'} not followed`);
          } else finish('http_error', status, text);
          res.destroy();
        };
        res.on('data', (chunk: Buffer) => {
          if (kept < maxResponseBytes) {
            chunks.push(chunk.subarray(0, maxResponseBytes - kept));
            kept += Math.min(chunk.length, maxResponseBytes - kept);
          }
          // The status is what counts: stop reading a long answer once the excerpt is full.
          if (kept >= maxResponseBytes) done();
        });
        res.on('end', done);
        res.on('error', (error) => finish('network_error', status, error.message));
      },
    );
    const deadline = setTimeout(() => {
      finish('timeout', null, `no complete answer within ${timeoutMs} ms`);
      req.destroy();
    }, timeoutMs);
    req.on('error', (error) => finish('network_error', null, error.message));
    req.end(body);
  });
}

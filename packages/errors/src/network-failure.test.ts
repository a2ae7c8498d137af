// A connection that fails on any upstream is the caller's retryable upstream error, never a 500.
import { describe, expect, it } from 'vitest';
import { AppError, networkFailureError, toPublicErrorBody } from './index.ts';

/** What Node's fetch throws: `TypeError: fetch failed` with the system error as its cause. */
const fetchFailed = (cause: unknown) => new TypeError('fetch failed', { cause });
const systemError = (code: string, message = code) => Object.assign(new Error(message), { code });

describe('networkFailureError', () => {
  it.each([
    ['ENOTFOUND', 'UPSTREAM_ERROR', 'DNS lookup failed'],
    ['EAI_AGAIN', 'UPSTREAM_ERROR', 'DNS lookup failed'],
    ['ECONNREFUSED', 'UPSTREAM_ERROR', 'connection refused'],
    ['ECONNRESET', 'UPSTREAM_ERROR', 'connection reset'],
    ['UND_ERR_SOCKET', 'UPSTREAM_ERROR', 'connection reset'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'UPSTREAM_ERROR', 'TLS'],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'UPSTREAM_ERROR', 'TLS'],
    ['UND_ERR_CONNECT_TIMEOUT', 'UPSTREAM_TIMEOUT', 'timed out'],
  ])('%s behind a failed fetch is %s, naming the failure, never the host', (code, expected, words) => {
    const err = fetchFailed(systemError(code, `getaddrinfo ${code} rr1---sn-x.googlevideo.com`));
    const app = networkFailureError(err, 'The audio host');
    expect(app?.code).toBe(expected);
    expect(app?.retryable).toBe(true);
    expect(app?.message).toContain(words);
    expect(app?.message).toMatch(/^The audio host could not be reached/);
    expect(app?.message).not.toContain('googlevideo');
    const body = toPublicErrorBody(err, 'req_1');
    expect(body.error.code).toBe(expected);
    expect(body.error.message).not.toContain('googlevideo');
  });

  it("reads AbortSignal.timeout's reason as a timeout", () => {
    const reason = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    expect(networkFailureError(reason)?.code).toBe('UPSTREAM_TIMEOUT');
  });

  it('leaves other errors alone: an AppError stays itself, anything else stays a 500', () => {
    expect(networkFailureError(new AppError('NO_SPEECH', 'silence'))).toBeUndefined();
    expect(networkFailureError(new Error('boom'))).toBeUndefined();
    expect(toPublicErrorBody(new Error('boom'), 'req_2').error.code).toBe('INTERNAL_ERROR');
  });
});

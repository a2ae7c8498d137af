/**
 * Why a request to an upstream (the platform, its media hosts, a model or embeddings endpoint) got
 * no answer at all, in the words an operator acts on. Node's
 * fetch (undici) reports every such failure as `TypeError: fetch failed` and keeps the reason in
 * its `cause` chain (a system error code such as ENOTFOUND, or an undici error code); this reads
 * that chain so logs, errors and the `subx_upstream_network_errors_total` counter say "DNS lookup
 * failed" or "connection refused" instead of "fetch failed".
 */

export type NetworkCause = 'dns' | 'refused' | 'reset' | 'tls' | 'timeout' | 'other';

const BY_CODE: Record<string, NetworkCause> = {
  ENOTFOUND: 'dns',
  EAI_AGAIN: 'dns',
  EAI_FAIL: 'dns',
  EAI_NONAME: 'dns',
  ECONNREFUSED: 'refused',
  EHOSTUNREACH: 'refused',
  ENETUNREACH: 'refused',
  ECONNRESET: 'reset',
  EPIPE: 'reset',
  ECONNABORTED: 'reset',
  UND_ERR_SOCKET: 'reset',
  UND_ERR_CLOSED: 'reset',
  ETIMEDOUT: 'timeout',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
  UND_ERR_HEADERS_TIMEOUT: 'timeout',
  UND_ERR_BODY_TIMEOUT: 'timeout',
};

const WORDS: Record<NetworkCause, string> = {
  dns: 'DNS lookup failed',
  refused: 'connection refused or no route to the host',
  reset: 'connection reset',
  tls: 'TLS handshake or certificate failed',
  timeout: 'connection timed out',
  other: 'network error',
};

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The first error code along the cause chain (at most 5 deep), with the cause it stands for. */
export function networkCauseOf(err: unknown): {
  cause: NetworkCause;
  code: string | undefined;
  detail: string;
} {
  let at: unknown = err;
  for (let depth = 0; depth < 5 && at; depth++) {
    // AbortSignal.timeout's reason: a DOMException whose `code` is a number, known by its name.
    if ((at as { name?: unknown }).name === 'TimeoutError')
      return { cause: 'timeout', code: undefined, detail: WORDS.timeout };
    const code = codeOf(at);
    if (code) {
      const cause =
        BY_CODE[code] ??
        (/^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|ERR_OSSL)/.test(code)
          ? 'tls'
          : undefined);
      if (cause) return { cause, code, detail: `${WORDS[cause]} (${code})` };
    }
    at = (at as { cause?: unknown }).cause;
  }
  const message = err instanceof Error ? err.message : String(err);
  return { cause: 'other', code: codeOf(err), detail: `${WORDS.other} (${message})` };
}

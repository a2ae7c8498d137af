import { Resolver } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/** Why a webhook URL is not accepted; `message` says it to the API user. */
export type WebhookTargetRefusal =
  'invalid_url' | 'unsupported_scheme' | 'credentials_in_url' | 'unresolvable' | 'private_address';

export class WebhookTargetRefusedError extends Error {
  readonly reason: WebhookTargetRefusal;
  constructor(reason: WebhookTargetRefusal, message: string) {
    super(message);
    this.name = 'WebhookTargetRefusedError';
    this.reason = reason;
  }
}

export interface ResolvedWebhookTarget {
  url: URL;
  /** The address the delivery connects to: checked here, so a second DNS answer cannot swap it. */
  address: string;
  family: 4 | 6;
}

export type HostLookup = (host: string) => Promise<Array<{ address: string; family: number }>>;

export interface WebhookTargetPolicy {
  /** `WEBHOOK_ALLOW_PRIVATE_NETWORKS=true`: for self-hosted setups whose receivers are internal. */
  allowPrivateNetworks: boolean;
  /** Default: the system's DNS servers through c-ares (`dnsLookup()`), every address. */
  lookup?: HostLookup;
  /** Bound on the DNS answer. Default 5 000 ms. */
  lookupTimeoutMs?: number;
}

export const MAX_WEBHOOK_URL_LENGTH = 2_048;

/**
 * A lookup that asks DNS servers directly (c-ares: A and AAAA), never `dns.lookup`: getaddrinfo
 * runs on libuv's threadpool (4 threads, shared with file and crypto work), so a few slow answers
 * would hold every thread past any timeout of ours, and the process's other waits with them. A
 * c-ares query holds no thread; the resolver is this lookup's own, so a timeout cancels it alone.
 * `servers`: the system's (resolv.conf) unless given. /etc/hosts is not read (webhook receivers
 * are named in DNS); `localhost` is loopback, as RFC 6761 has it.
 */
export function dnsLookup(options: { servers?: readonly string[]; timeoutMs?: number } = {}): HostLookup {
  return async (host) => {
    // RFC 6761: localhost is loopback, answered here (not every c-ares build does it itself).
    if (host === 'localhost' || host.endsWith('.localhost')) {
      return [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ];
    }
    const resolver = new Resolver({ timeout: options.timeoutMs ?? 2_000, tries: 2 });
    if (options.servers) resolver.setServers([...options.servers]);
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
    const answers = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
    ];
    if (answers.length === 0 && v4.status === 'rejected') throw v4.reason;
    return answers;
  };
}

const systemLookup: HostLookup = dnsLookup();

/**
 * Anything but a public unicast address is refused: loopback, RFC 1918, link-local (the cloud
 * metadata service at 169.254.169.254), unique-local, carrier-grade NAT, multicast, reserved and the
 * rest, for IPv4 and IPv6 alike (IPv4-mapped IPv6 is judged as the IPv4 it carries).
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === 'unicast';
}

/**
 * Checks a webhook URL against the policy and resolves the address to deliver to. Every address
 * the name resolves to must be public (a name with one public and one private answer is refused:
 * the connection could go to either); the first is the one used.
 */
export async function resolveWebhookTarget(
  raw: string,
  policy: WebhookTargetPolicy,
): Promise<ResolvedWebhookTarget> {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) {
    throw new WebhookTargetRefusedError(
      'invalid_url',
      `webhook_url is longer than ${MAX_WEBHOOK_URL_LENGTH} characters`,
    );
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookTargetRefusedError('invalid_url', 'webhook_url is not an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new WebhookTargetRefusedError('unsupported_scheme', 'webhook_url must use https (or http)');
  }
  if (url.username !== '' || url.password !== '') {
    throw new WebhookTargetRefusedError(
      'credentials_in_url',
      'webhook_url must not carry credentials; verify deliveries by their webhook-signature instead',
    );
  }
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const answers = ipaddr.isValid(host)
    ? [{ address: host, family: ipaddr.parse(host).kind() === 'ipv6' ? 6 : 4 }]
    : await resolveBounded(host, policy);
  if (answers.length === 0) {
    throw new WebhookTargetRefusedError('unresolvable', `webhook_url's host ${host} does not resolve`);
  }
  if (!policy.allowPrivateNetworks) {
    const blocked = answers.find((a) => !isPublicAddress(a.address));
    if (blocked) {
      throw new WebhookTargetRefusedError(
        'private_address',
        `webhook_url's host ${host} resolves to a private, loopback or link-local address (${blocked.address}); ` +
          'webhooks go to public addresses only unless the operator sets WEBHOOK_ALLOW_PRIVATE_NETWORKS=true',
      );
    }
  }
  const first = answers[0]!;
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}

async function resolveBounded(host: string, policy: WebhookTargetPolicy) {
  const lookup = policy.lookup ?? systemLookup;
  const timeoutMs = policy.lookupTimeoutMs ?? 5_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      lookup(host),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new WebhookTargetRefusedError(
                'unresolvable',
                `webhook_url's host ${host} did not resolve within ${timeoutMs} ms`,
              ),
            ),
          timeoutMs,
        );
      }),
    ]);
  } catch (error) {
    if (error instanceof WebhookTargetRefusedError) throw error;
    throw new WebhookTargetRefusedError('unresolvable', `webhook_url's host ${host} does not resolve`);
  } finally {
    clearTimeout(timer);
  }
}

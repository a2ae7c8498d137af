/**
 * A preload (`node --import @subx/testing/no-network`, or its path) for a process that must never
 * reach past this machine: every connection to a host that is not loopback fails with ECONNREFUSED
 * before a packet leaves, and every DNS lookup of a name other than `localhost` fails with
 * ENOTFOUND. Sockets of every kind go through `net.Socket.prototype.connect` (fetch/undici, http,
 * TLS, gRPC's http2), so one gate holds them all. Each refused host is appended to the file
 * NO_NETWORK_LOG names, when set, so a test can say that nothing even tried.
 */
import dns from 'node:dns';
import { appendFileSync } from 'node:fs';
import net from 'node:net';

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|::1|::ffff:127(?:\.\d{1,3}){3}|0\.0\.0\.0|::)$/i;
const logFile = process.env.NO_NETWORK_LOG;

function note(host: string): void {
  if (logFile) appendFileSync(logFile, `${host}\n`);
}

const refusal = (host: string, code: 'ECONNREFUSED' | 'ENOTFOUND', syscall: string) =>
  Object.assign(new Error(`${syscall} ${code} ${host} (no network: loopback only)`), {
    code,
    syscall,
    hostname: host,
  });

type ConnectArgs = Parameters<net.Socket['connect']>;
const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function connectLoopbackOnly(this: net.Socket, ...args: unknown[]) {
  // net.connect() hands its normalised arguments over as one array.
  const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
  const options =
    typeof first === 'object' && first !== null
      ? (first as { host?: string; path?: string })
      : typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))
        ? { host: typeof args[1] === 'string' ? args[1] : 'localhost' }
        : { path: String(first) };
  const host = options.path === undefined ? (options.host ?? 'localhost') : undefined;
  if (host !== undefined && !LOOPBACK.test(host.replace(/^\[|\]$/g, ''))) {
    note(host);
    process.nextTick(() => this.destroy(refusal(host, 'ECONNREFUSED', 'connect')));
    return this;
  }
  return connect.apply(this, args as ConnectArgs);
};

const lookup = dns.lookup;
const gatedLookup = function gatedLookup(hostname: string, ...rest: unknown[]) {
  const callback = rest.at(-1) as (err: Error | null, ...values: unknown[]) => void;
  if (!LOOPBACK.test(hostname)) {
    note(hostname);
    process.nextTick(() => callback(refusal(hostname, 'ENOTFOUND', 'getaddrinfo')));
    return {};
  }
  return (lookup as (...a: unknown[]) => unknown)(hostname, ...rest);
};
(dns as { lookup: unknown }).lookup = gatedLookup;
const promiseLookup = dns.promises.lookup;
(dns.promises as { lookup: unknown }).lookup = async (hostname: string, ...rest: unknown[]) => {
  if (!LOOPBACK.test(hostname)) {
    note(hostname);
    throw refusal(hostname, 'ENOTFOUND', 'getaddrinfo');
  }
  return (promiseLookup as (...a: unknown[]) => Promise<unknown>)(hostname, ...rest);
};

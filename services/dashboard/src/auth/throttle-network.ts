/**
 * The "per IP" subject of the dashboard's limits. IPv4 (and IPv4-mapped IPv6): the address. IPv6:
 * its /64, because one customer line or host usually gets a whole /64 and can pick any address in
 * it, so a limit per IPv6 address would be a limit per guess.
 */
import ipaddr from 'ipaddr.js';

export function throttleNetwork(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const parsed = ipaddr.process(ip); // unwraps ::ffff:a.b.c.d into IPv4
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${parts.map((p) => p.toString(16)).join(':')}::/64`;
}

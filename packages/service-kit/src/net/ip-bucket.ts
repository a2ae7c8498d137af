/**
 * The per-IP limit's subject. An IPv6 host usually holds a whole /64 (SLAAC, privacy addresses), so
 * counting single IPv6 addresses would give one client 2^64 buckets: IPv6 addresses count by their
 * /64 prefix. IPv4 (and IPv4-mapped IPv6, `::ffff:192.0.2.1`) counts per address.
 */
import ipaddr from 'ipaddr.js';

export function ipBucket(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip.slice(0, 64) || 'unknown';
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return address.toString();
  const parts = (address as ipaddr.IPv6).parts.slice(0, 4);
  return `${parts.map((p) => p.toString(16)).join(':')}::/64`;
}

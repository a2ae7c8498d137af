import { describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { ipBucket } from './ip-bucket.ts';
import { trustProxyEnv, trustedProxyList } from './trust-proxy.ts';

describe('TRUST_PROXY', () => {
  it('reads false, a hop count, or proxy addresses and CIDRs', () => {
    expect(trustProxyEnv.parse('')).toBe(false);
    expect(trustProxyEnv.parse('false')).toBe(false);
    expect(trustProxyEnv.parse('0')).toBe(false);
    expect(trustProxyEnv.parse('1')).toBeTypeOf('function');
    expect(trustProxyEnv.parse(' 2 ')).toBeTypeOf('function');
    expect(trustProxyEnv.parse('10.0.0.0/8, 192.0.2.7,fd00::/8, loopback')).toEqual([
      '10.0.0.0/8',
      '192.0.2.7',
      'fd00::/8',
      'loopback',
    ]);
  });

  it('refuses true (every client could pick its address), absurd hop counts and non-addresses', () => {
    for (const bad of ['true', '99', '10.0.0.0/33', 'ingress.local', '10.0.0.1, nope']) {
      const result = trustProxyEnv.safeParse(bad);
      expect(result.success, bad).toBe(false);
      expect(result.error?.issues[0]?.message).toMatch(/hop count/);
    }
    expect(trustedProxyList.safeParse('10.0.0.0/8, 300.1.1.1').error?.issues[0]?.message).toMatch(
      /"300\.1\.1\.1"/,
    );
  });

  it('gives fastify a client address it can trust: a hop count takes the address the proxy saw', async () => {
    const seen = async (trustProxy: ReturnType<typeof trustProxyEnv.parse>, remote: string) => {
      const app = Fastify({ trustProxy });
      app.get('/', (request) => ({ ip: request.ip }));
      const res = await app.inject({
        url: '/',
        remoteAddress: remote,
        // A client's own X-Forwarded-For first, then what the ingress appended.
        headers: { 'x-forwarded-for': '6.6.6.6, 203.0.113.9' },
      });
      await app.close();
      return (res.json() as { ip: string }).ip;
    };
    expect(await seen(trustProxyEnv.parse('1'), '10.1.2.3')).toBe('203.0.113.9');
    expect(await seen(trustProxyEnv.parse('2'), '10.1.2.3')).toBe('6.6.6.6');
    expect(await seen(trustProxyEnv.parse('10.0.0.0/8'), '10.1.2.3')).toBe('203.0.113.9');
    // Not from a listed proxy: the header is ignored.
    expect(await seen(trustProxyEnv.parse('10.0.0.0/8'), '198.51.100.1')).toBe('198.51.100.1');
    expect(await seen(trustProxyEnv.parse('false'), '10.1.2.3')).toBe('10.1.2.3');
  });
});

describe('ipBucket', () => {
  it('is the IPv4 address, or the /64 of an IPv6 address', () => {
    expect(ipBucket('203.0.113.7')).toBe('203.0.113.7');
    expect(ipBucket('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(ipBucket('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(ipBucket('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(ipBucket('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(ipBucket('not-an-ip'.repeat(20))).toHaveLength(64);
    expect(ipBucket('')).toBe('unknown');
  });
});

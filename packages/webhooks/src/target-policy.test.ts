import { describe, expect, it } from 'vitest';
import {
  dnsLookup,
  isPublicAddress,
  resolveWebhookTarget,
  WebhookTargetRefusedError,
  type HostLookup,
} from './target-policy.ts';

const answers =
  (table: Record<string, string[]>): HostLookup =>
  async (host) => {
    const list = table[host];
    if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

const refusal = async (url: string, lookup: HostLookup = answers({})) => {
  try {
    await resolveWebhookTarget(url, { allowPrivateNetworks: false, lookup });
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookTargetRefusedError);
    return (error as WebhookTargetRefusedError).reason;
  }
  return 'accepted';
};

describe('which addresses count as public', () => {
  it('refuses loopback, private, link-local, unique-local, CGNAT, multicast and mapped forms', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::ffff:169.254.169.254',
      'not-an-ip',
    ]) {
      expect(isPublicAddress(address), address).toBe(false);
    }
    for (const address of ['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      expect(isPublicAddress(address), address).toBe(true);
    }
  });
});

describe('resolveWebhookTarget', () => {
  it('accepts a public https target and pins the address it resolved', async () => {
    const target = await resolveWebhookTarget('https://hooks.example.com/subx?x=1', {
      allowPrivateNetworks: false,
      lookup: answers({ 'hooks.example.com': ['93.184.215.14'] }),
    });
    expect(target).toMatchObject({ address: '93.184.215.14', family: 4 });
    expect(target.url.pathname).toBe('/subx');
  });

  it('refuses literal private addresses, names that resolve to one, and mixed answers', async () => {
    expect(await refusal('http://127.0.0.1:8080/hook')).toBe('private_address');
    expect(await refusal('http://[::1]/hook')).toBe('private_address');
    expect(await refusal('http://169.254.169.254/latest/meta-data')).toBe('private_address');
    expect(
      await refusal('https://internal.example/hook', answers({ 'internal.example': ['10.0.0.5'] })),
    ).toBe('private_address');
    expect(
      await refusal(
        'https://both.example/hook',
        answers({ 'both.example': ['93.184.215.14', '192.168.0.2'] }),
      ),
    ).toBe('private_address');
    expect(await refusal('http://localhost/hook', answers({ localhost: ['127.0.0.1', '::1'] }))).toBe(
      'private_address',
    );
  });

  it('says why the other bad URLs are refused', async () => {
    expect(await refusal('not a url')).toBe('invalid_url');
    expect(await refusal(`https://example.com/${'a'.repeat(2_100)}`)).toBe('invalid_url');
    expect(await refusal('ftp://example.com/hook')).toBe('unsupported_scheme');
    expect(await refusal('file:///etc/passwd')).toBe('unsupported_scheme');
    expect(await refusal('https://user:pass@example.com/hook')).toBe('credentials_in_url');
    expect(await refusal('https://nowhere.invalid/hook')).toBe('unresolvable');
  });

  it('bounds a DNS answer that never comes', async () => {
    const t0 = performance.now();
    await expect(
      resolveWebhookTarget('https://slow.example/hook', {
        allowPrivateNetworks: false,
        lookup: () => new Promise(() => undefined),
        lookupTimeoutMs: 100,
      }),
    ).rejects.toThrow(/did not resolve within 100 ms/);
    expect(performance.now() - t0).toBeLessThan(2_000);
  });

  it('lets private targets through when the operator allows private networks', async () => {
    const target = await resolveWebhookTarget('http://127.0.0.1:9000/hook', { allowPrivateNetworks: true });
    expect(target).toMatchObject({ address: '127.0.0.1', family: 4 });
    const v6 = await resolveWebhookTarget('http://[::1]:9000/hook', { allowPrivateNetworks: true });
    expect(v6).toMatchObject({ address: '::1', family: 6 });
  });
});

describe('the DNS wait under load', () => {
  it('holds none of libuv’s threads: lookups a DNS server never answers leave file and crypto work free', async () => {
    const { createSocket } = await import('node:dgram');
    const { pbkdf2 } = await import('node:crypto');
    // A DNS server on loopback that reads every question and answers none.
    const silent = createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    const server = `127.0.0.1:${silent.address().port}`;
    const lookup = dnsLookup({ servers: [server], timeoutMs: 1_500 });
    const policy = { allowPrivateNetworks: false, lookup, lookupTimeoutMs: 1_000 };
    const started = performance.now();
    const waits = Array.from({ length: 16 }, (_, i) =>
      resolveWebhookTarget(`https://slow-${i}.example.com/hook`, policy).then(
        () => 'resolved',
        (e: WebhookTargetRefusedError) => e.reason,
      ),
    );
    // Threadpool work (4 threads by default) while 16 lookups wait: it must not queue behind them.
    const hashed = performance.now();
    await Promise.all(
      Array.from(
        { length: 4 },
        () =>
          new Promise((resolve, reject) =>
            pbkdf2('x', 'y', 1, 32, 'sha256', (e, k) => (e ? reject(e) : resolve(k))),
          ),
      ),
    );
    expect(performance.now() - hashed).toBeLessThan(500);
    // Every lookup ends at the bound, refused as unresolvable.
    expect(new Set(await Promise.all(waits))).toEqual(new Set(['unresolvable']));
    expect(performance.now() - started).toBeLessThan(3_000);
    silent.close();
  });

  it('answers localhost as loopback (RFC 6761), so local receivers still resolve', async () => {
    const answers = await dnsLookup({ servers: ['127.0.0.1:9'] })('localhost');
    expect(answers.length).toBeGreaterThan(0);
    expect(answers.every((a) => ['127.0.0.1', '::1'].includes(a.address))).toBe(true);
  });
});

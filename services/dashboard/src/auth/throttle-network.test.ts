import { describe, expect, it } from 'vitest';
import { throttleNetwork } from './throttle-network.ts';

describe('throttle network', () => {
  it('are one network per /64 (IPv4 and mapped IPv4 per address)', () => {
    expect(throttleNetwork('2001:db8:1:2:aaaa::1')).toBe(throttleNetwork('2001:0db8:0001:0002:ffff:1:2:3'));
    expect(throttleNetwork('2001:db8:1:2::1')).not.toBe(throttleNetwork('2001:db8:1:3::1'));
    expect(throttleNetwork('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(throttleNetwork('192.0.2.7')).not.toBe(throttleNetwork('192.0.2.8'));
  });
});

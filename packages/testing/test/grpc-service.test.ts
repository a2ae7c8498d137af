import { connect, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { LOOPBACK_HOST, startGrpcTestService } from '../src/grpc-service.ts';

/** A stand-in for one of our services: any server on port 0 that reports its port and stops. */
async function startTcpService(host: string, events: string[]) {
  const server = createServer((socket) => socket.end('hello'));
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    host,
    stop: (timeoutMs?: number) => {
      events.push(`service stopped within ${timeoutMs}`);
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const greeting = (address: string) =>
  new Promise<string>((resolve, reject) => {
    const [host, port] = address.split(':');
    const socket = connect(Number(port), host);
    let text = '';
    socket.on('data', (chunk) => (text += String(chunk)));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });

describe('startGrpcTestService', () => {
  it('starts on loopback, connects the client to the chosen port, and stops client first', async () => {
    const events: string[] = [];
    const running = await startGrpcTestService({
      start: (host) => startTcpService(host, events),
      client: (address) => ({ address, close: () => events.push('client closed') }),
      stopTimeoutMs: 250,
    });
    expect(running.service.host).toBe(LOOPBACK_HOST);
    expect(running.service.port).toBeGreaterThan(0);
    expect(running.address).toBe(`127.0.0.1:${running.service.port}`);
    expect(running.client.address).toBe(running.address);
    expect(await greeting(running.address)).toBe('hello');

    await running.stop();
    expect(events).toEqual(['client closed', 'service stopped within 250']);
    await expect(greeting(running.address)).rejects.toThrow(/ECONNREFUSED/);
  });

  it('has no client unless asked for one', async () => {
    const events: string[] = [];
    const running = await startGrpcTestService({ start: (host) => startTcpService(host, events) });
    expect(running.client).toBeUndefined();
    await running.stop();
    expect(events).toEqual(['service stopped within 1000']);
  });

  it('stops the service when the client cannot be made', async () => {
    const events: string[] = [];
    let address = '';
    await expect(
      startGrpcTestService({
        start: (host) => startTcpService(host, events),
        client: (a): { close(): void } => {
          address = a;
          throw new Error('bad client');
        },
      }),
    ).rejects.toThrow('bad client');
    expect(events).toEqual(['service stopped within 1000']);
    await expect(greeting(address)).rejects.toThrow(/ECONNREFUSED/);
  });
});

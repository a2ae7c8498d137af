/**
 * A process with several listeners checks them all before it starts any: a busy port found by the
 * third `listen` would leave the first two started and report one port of possibly several. Each
 * port is bound for a moment (all at once, so two variables naming the same port collide here as
 * they would later) and released.
 */
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { PortsInUseError } from '../startup-errors.ts';
import type { Listener } from '../startup-errors.ts';
import { withTimeout } from '../timeout.ts';

/** A local bind answers at once; this only bounds a stuck one. */
const PROBE_TIMEOUT_MS = 5_000;

function probe(server: Server, listener: Listener): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    // Any other failure (EACCES, an unknown host) is left to the real listen, which reports it.
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'EADDRINUSE'));
    server.listen({ port: listener.port, host: listener.host, exclusive: true }, () => resolve(false));
  });
}

/**
 * Throws ONE PortsInUseError naming every listener whose port is taken (in the given order).
 * Port 0 (any free port) is never checked. A check that takes too long is given up (the real
 * listens still report a busy port, one at a time).
 */
export async function assertPortsFree(listeners: readonly Listener[]): Promise<void> {
  const fixed = listeners.filter((l) => l.port !== 0);
  const servers = fixed.map(() => createServer());
  const busy = await withTimeout(
    () => Promise.all(fixed.map((l, i) => probe(servers[i]!, l))),
    PROBE_TIMEOUT_MS,
    () => null,
  );
  await Promise.all(
    servers.map(
      (s) =>
        new Promise<void>((resolve) => {
          if (s.listening) return s.close(() => resolve());
          // Still binding after the timeout: released whenever it gets there.
          s.once('listening', () => s.close());
          resolve();
        }),
    ),
  );
  const taken = busy === null ? [] : fixed.filter((_, i) => busy[i]);
  if (taken.length > 0) throw new PortsInUseError(taken.map(({ variable, port }) => ({ variable, port })));
}

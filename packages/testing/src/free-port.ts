/** The one way tests pick a port: a loopback TCP port that was free a moment ago. */
import { createServer } from 'node:net';

/**
 * A free port on 127.0.0.1 (bound to port 0, then released). For a process that must be told its
 * port up front, or an address that must refuse connections; a server of the test's own listens
 * on port 0 instead.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

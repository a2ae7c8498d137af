import { connect, createServer, type Socket } from 'node:net';

/** A loopback TCP proxy in front of a real server that a test can freeze: connections stay open, nothing flows. */
export interface FreezableProxy {
  /** `127.0.0.1:<port>` to give the client instead of the server's address. */
  readonly address: string;
  readonly port: number;
  /** From now on bytes in both directions are held back (a server that went silent). */
  freeze(): void;
  /** Drops every held connection and lets new ones through again. */
  thaw(): void;
  close(): Promise<void>;
}

/**
 * Starts a proxy to `target` (`host:port`). A frozen proxy keeps accepting and keeps every socket
 * open but forwards nothing, which is what a hung server looks like to a client: no error, no
 * close, no answer.
 */
export async function startFreezableProxy(target: string): Promise<FreezableProxy> {
  const [host, portText] = target.split(':');
  const pairs = new Set<[Socket, Socket]>();
  let frozen = false;
  const server = createServer((client) => {
    const upstream = connect(Number(portText), host!);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const forward = (from: Socket, to: Socket) =>
      from.on('data', (chunk: Buffer) => {
        if (!frozen) to.write(chunk);
      });
    forward(client, upstream);
    forward(upstream, client);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const thaw = () => {
    frozen = false;
    for (const [client, upstream] of pairs) {
      client.destroy();
      upstream.destroy();
    }
    pairs.clear();
  };
  return {
    address: `127.0.0.1:${port}`,
    port,
    freeze() {
      frozen = true;
    },
    thaw,
    async close() {
      thaw();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

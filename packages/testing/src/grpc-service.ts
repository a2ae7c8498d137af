/**
 * The one way a test runs one of our gRPC services: started on a loopback port of its own, with a
 * generated client to it, and stopped in the right order (client first, so the service's graceful
 * stop is not held up by the test's own open call).
 */

/** What every `start*Service` of ours returns. */
export interface LoopbackService {
  readonly port: number;
  stop(timeoutMs?: number): Promise<void>;
}

export interface Closable {
  close(): void;
}

export interface GrpcTestService<S extends LoopbackService, C extends Closable | undefined> {
  readonly service: S;
  /** The generated client, or undefined when the test asked for none. */
  readonly client: C;
  /** `127.0.0.1:<port>`, for a client or health check of the test's own. */
  readonly address: string;
  /** Closes the client, then stops the service (graceful within `stopTimeoutMs`). */
  stop(): Promise<void>;
}

export const LOOPBACK_HOST = '127.0.0.1';

/**
 * Starts a service with `start(LOOPBACK_HOST)` (its config says port 0, so the system picks the
 * port) and connects `client(address)` to it. The service is stopped again when the client cannot
 * be made, so a failed `beforeAll` leaves no server behind.
 */
export async function startGrpcTestService<
  S extends LoopbackService,
  C extends Closable | undefined = undefined,
>(options: {
  start: (host: string) => Promise<S>;
  client?: (address: string) => C;
  stopTimeoutMs?: number;
}): Promise<GrpcTestService<S, C>> {
  const stopTimeoutMs = options.stopTimeoutMs ?? 1_000;
  const service = await options.start(LOOPBACK_HOST);
  const address = `${LOOPBACK_HOST}:${service.port}`;
  let client: C;
  try {
    client = options.client ? options.client(address) : (undefined as C);
  } catch (error) {
    await service.stop(stopTimeoutMs);
    throw error;
  }
  return {
    service,
    client,
    address,
    async stop() {
      client?.close();
      await service.stop(stopTimeoutMs);
    },
  };
}

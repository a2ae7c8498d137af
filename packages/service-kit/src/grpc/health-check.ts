/** A one-shot grpc.health.v1 Check, used by readiness checks and the healthcheck probe. */
import * as grpc from '@grpc/grpc-js';
import { HealthClient } from './health-service.ts';

export type HealthState = 'SERVING' | 'NOT_SERVING' | 'UNKNOWN' | 'UNREACHABLE';

/**
 * grpc.health.v1 Check against `target`: an address, or an existing client (its channel is reused,
 * so the answer reflects the connection the caller actually uses). A service the server does not
 * know is 'UNKNOWN'; a server that cannot be reached in time is 'UNREACHABLE'.
 */
export function checkHealth(
  target: string | grpc.Client,
  service = '',
  deadlineMs = 2_000,
): Promise<HealthState> {
  const client =
    typeof target === 'string'
      ? new HealthClient(target, grpc.credentials.createInsecure())
      : new HealthClient('unused', grpc.credentials.createInsecure(), {
          channelOverride: target.getChannel(),
        });
  return new Promise<HealthState>((resolve) => {
    client.check(
      { service },
      new grpc.Metadata(),
      { deadline: Date.now() + deadlineMs },
      (error, response) => {
        if (typeof target === 'string') client.close();
        if (!error) {
          resolve(
            response.status === 'SERVING' || response.status === 'NOT_SERVING' ? response.status : 'UNKNOWN',
          );
        } else if (error.code === grpc.status.UNAVAILABLE || error.code === grpc.status.DEADLINE_EXCEEDED) {
          resolve('UNREACHABLE');
        } else {
          resolve('UNKNOWN');
        }
      },
    );
  });
}

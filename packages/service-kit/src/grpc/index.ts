/**
 * gRPC kit: server start/shutdown with grpc.health.v1, async handlers with request ids and the
 * AppError ↔ gRPC status mapping, and clients with default deadlines that turn failures back into
 * AppErrors. Works with the ts-proto `outputServices=grpc-js` code in @subx/contracts.
 *
 * Across the wire an AppError travels as its catalogue gRPC status plus trailing metadata:
 * `app-error-code`, `app-error-message`, `app-error-reason`, `app-error-details` (JSON) and
 * `app-error-retry-after`. gRPC forbids non-ASCII in text metadata, so message, reason and details
 * are percent-encoded (encodeURIComponent) and decoded by `fromGrpcError`.
 */
export * from './service-definition.ts';
export {
  APP_ERROR_CODE,
  APP_ERROR_DETAILS,
  APP_ERROR_MESSAGE,
  APP_ERROR_REASON,
  APP_ERROR_RETRY_AFTER,
  REQUEST_ID_HEADER,
  fromGrpcError,
  fromItemFailure,
  grpcStatusName,
  toGrpcError,
  toItemFailure,
} from './errors.ts';
export type { ItemFailure } from './errors.ts';
export * from './batch.ts';
export * from './server.ts';
export * from './client.ts';
export * from './health-check.ts';
export { HealthClient, HealthService, HealthServiceName, createHealthServer } from './health-service.ts';
export type { HealthServer, ServingStatus } from './health-service.ts';

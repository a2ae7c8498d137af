export { buildApp } from './app.ts';
export type { GatewayDeps } from './deps.ts';
export { loadConfig, ConfigSchema, redactConfig } from './config.ts';
export type { Config } from './config.ts';
export type {
  Backends,
  ExtractorBackend,
  CommentsBackend,
  AiBackend,
  BillingBackend,
  CallOptions,
} from '@subx/backends';
export { createGrpcBackends, grpcBackendsFromConfig } from '@subx/backends';
export type { FanOut, FanOutRequest, FanOutOutcome, FanOutJob } from '@subx/fanout';
export { createDirectFanOut } from '@subx/fanout';
export { createKafkaFanOut } from '@subx/fanout';
export type { KafkaFanOut, KafkaFanOutStats } from '@subx/fanout';
export { buildOpenApi } from './openapi/openapi.ts';
export { startGateway } from './start-gateway.ts';
export { loadAccessConfig } from './access/config.ts';
export type { StartGatewayOptions, RunningGateway } from './start-gateway.ts';
// How the gateway stores an account and its key, for tooling that seeds one (the demo).
export { hashApiKey, keyDisplay } from './access/api-key.ts';
export type { AccountDoc, AccountRepository } from './access/accounts.ts';

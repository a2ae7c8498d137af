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
} from './backends/types.ts';
export { createGrpcBackends, grpcBackendsFromConfig } from './backends/grpc.ts';
export type { FanOut, FanOutRequest, FanOutOutcome, FanOutJob } from './fanout/types.ts';
export { createDirectFanOut } from './fanout/direct.ts';
export { createKafkaFanOut } from './fanout/kafka-fan-out.ts';
export type { KafkaFanOut, KafkaFanOutStats } from './fanout/kafka-fan-out.ts';
export { buildOpenApi } from './openapi/openapi.ts';
export { startGateway } from './start-gateway.ts';
export { loadAccessConfig } from './access/config.ts';
export type { StartGatewayOptions, RunningGateway } from './start-gateway.ts';
// How the gateway stores an account and its key, for tooling that seeds one (the demo).
export { hashApiKey, keyDisplay } from './access/api-key.ts';
export type { AccountDoc, AccountRepository } from './access/accounts.ts';

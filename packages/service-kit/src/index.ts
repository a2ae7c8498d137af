export * from './config.ts';
export * from './logger.ts';
export * from './lifecycle.ts';
export * from './health.ts';
export * from './grpc.ts';
export * from './run-service.ts';

export * from './grpc.ts';
export * from './job-service.ts';
export * from './transcript-batcher.ts';
export * from './transcript-item.ts';
export * from './transcript-lanes.ts';
export * from './types.ts';

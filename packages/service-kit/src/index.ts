export * from './config.ts';
export * from './logger.ts';
export * from './lifecycle.ts';

export * from './direct.ts';
export * from './kafka-fan-out.ts';
export * from './types.ts';

export * from './event-bus/port.ts';
export * from './document-store/port.ts';
export * from './key-value/port.ts';
export * from './clock.ts';

/**
 * The logger every package and service takes: pino's (obj, msg) argument order, which pino's own
 * loggers, fastify's app and request loggers and the tests' recording loggers all fit. One shape
 * everywhere, so a logger passes from a service into any package without an adapter.
 */
export interface Logger {
  debug(fields: object, message?: string): void;
  info(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
  error(fields: object, message?: string): void;
}

export const silentLogger: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

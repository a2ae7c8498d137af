/** The slice of a pino logger the access module uses (pino's (obj, msg) argument order). */
export interface Logger {
  info(obj: Record<string, unknown>, msg?: string): void;
  warn(obj: Record<string, unknown>, msg?: string): void;
  error(obj: Record<string, unknown>, msg?: string): void;
}

export const silentLogger: Logger = { info: () => {}, warn: () => {}, error: () => {} };

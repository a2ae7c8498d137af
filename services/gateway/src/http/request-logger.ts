/**
 * `request.log` without a pino child per request. fastify makes a child logger for every request
 * (bound to its request id); pino builds a child's bindings through the redaction of every secret
 * field name (service-kit's logger), which cost about 6% of a cached extract's CPU on `npm start`
 * (in a profile) although most requests never log through it: the access line is written
 * once, with the request id as a field (access-log.ts). This logger makes the child the first time
 * something logs at an enabled level, and then behaves exactly like it.
 */
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';

type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildLoggerOptions = NonNullable<Parameters<FastifyBaseLogger['child']>[1]>;

type LevelName = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

class LazyChildLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions;
  #child: FastifyBaseLogger | undefined;
  #level: string | undefined;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
    this.#level = options.level;
  }

  /** The real child, made on first use; a level set before that is applied to it. */
  get #real(): FastifyBaseLogger {
    if (!this.#child) {
      this.#child = this.#parent.child(this.#bindings, this.#options);
      if (this.#level !== undefined) this.#child.level = this.#level;
    }
    return this.#child;
  }

  get level(): string {
    return this.#child?.level ?? this.#level ?? this.#parent.level;
  }

  set level(level: string) {
    if (this.#child) this.#child.level = level;
    else this.#level = level;
  }

  #enabled(level: LevelName): boolean {
    if (this.#child || this.#level !== undefined) return true;
    const parent = this.#parent as FastifyBaseLogger & { isLevelEnabled?: (l: string) => boolean };
    return parent.isLevelEnabled ? parent.isLevelEnabled(level) : true;
  }

  #log(level: LevelName, args: unknown[]): void {
    if (!this.#enabled(level)) return;
    (this.#real[level] as (...a: unknown[]) => void)(...args);
  }

  fatal(...args: unknown[]): void {
    this.#log('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#log('error', args);
  }
  warn(...args: unknown[]): void {
    this.#log('warn', args);
  }
  info(...args: unknown[]): void {
    this.#log('info', args);
  }
  debug(...args: unknown[]): void {
    this.#log('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#log('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real.child(bindings, options);
  }
}

export const lazyChildLoggerFactory: NonNullable<FastifyServerOptions['childLoggerFactory']> = (
  logger,
  bindings,
  options,
) => new LazyChildLogger(logger, bindings, options) as unknown as FastifyBaseLogger;

/**
 * Start/stop orchestration for one process. Resources register in dependency order (clients before
 * the servers that use them); `stop()` flips readiness first, then stops them in reverse order under
 * one deadline, so intake closes before the things in-flight work still needs.
 */
import type { Logger } from '@subx/ports';

export interface Component {
  start?(): Promise<void> | void;
  stop?(reason: string): Promise<void> | void;
  /** Contributes to `isReady()`; a component that is not ready makes the process not ready. */
  ready?(): boolean;
}

/** The parts of `process` the lifecycle touches; tests pass an EventEmitter. */
export interface ProcessLike {
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  removeListener(event: string, listener: (...args: unknown[]) => void): unknown;
  exitCode?: number | string | null | undefined;
}

export interface LifecycleOptions {
  /** An uncaught error is logged at `fatal` when the logger has that level (pino's), else `error`. */
  logger: Logger & { fatal?: Logger['error'] };
  /** Deadline for the whole of `stop()`. Default 10 000 ms (SHUTDOWN_TIMEOUT_MS). */
  shutdownTimeoutMs?: number;
  /** Hard exit; default `process.exit`. Injected in tests. */
  exit?: (code: number) => void;
  /** Default `process`. */
  process?: ProcessLike;
  /**
   * After a signal's clean stop, how long the process may stay alive before it is exited with its
   * exit code. Default 2 000 ms. Something a stopped component left behind (a client's reconnect
   * timer after its server went away: a gateway lingered 20 s after a Kafka outage until SIGKILL)
   * must not keep a stopped service running.
   */
  lingerMs?: number;
}

export interface Lifecycle {
  register(name: string, component: Component): void;
  /** Runs every `start` in registration order; if one fails, stops those already started and rethrows. */
  start(): Promise<void>;
  /** Idempotent: later calls return the same promise. Resolves true when every stop succeeded. */
  stop(reason: string): Promise<boolean>;
  isReady(): boolean;
  isShuttingDown(): boolean;
  /** SIGTERM/SIGINT → stop → exitCode 0; a second signal → exit(1); uncaught errors → stop → exit(1). */
  installSignalHandlers(): () => void;
}

interface Entry {
  name: string;
  component: Component;
}

export function createLifecycle(options: LifecycleOptions): Lifecycle {
  const { logger } = options;
  const timeoutMs = options.shutdownTimeoutMs ?? 10_000;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const proc: ProcessLike = options.process ?? process;
  const lingerMs = options.lingerMs ?? 2_000;

  const entries: Entry[] = [];
  let started: Entry[] = [];
  let running = false;
  let shuttingDown = false;
  let stopping: Promise<boolean> | undefined;

  async function stopEntries(list: readonly Entry[], reason: string): Promise<boolean> {
    let ok = true;
    for (const entry of [...list].reverse()) {
      if (!entry.component.stop) continue;
      const t0 = performance.now();
      try {
        await entry.component.stop(reason);
        logger.info({ component: entry.name, ms: Math.round(performance.now() - t0) }, 'stopped');
      } catch (err) {
        ok = false;
        // Keep going: one failing close must not leave later resources (Mongo, the OTel SDK) open.
        logger.error({ err, component: entry.name }, 'stop failed');
      }
    }
    return ok;
  }

  const lifecycle: Lifecycle = {
    register(name, component) {
      if (running || shuttingDown) throw new Error(`cannot register "${name}" after start()`);
      if (entries.some((e) => e.name === name)) throw new Error(`component "${name}" is already registered`);
      entries.push({ name, component });
    },

    async start() {
      if (running || shuttingDown) throw new Error('lifecycle already started');
      for (const entry of entries) {
        if (shuttingDown) return;
        try {
          await entry.component.start?.();
          if (shuttingDown) {
            // stop() ran while this component was starting and did not see it: close it here.
            await stopEntries([entry], 'stopped during start');
            return;
          }
          started.push(entry);
          logger.debug({ component: entry.name }, 'started');
        } catch (err) {
          logger.error({ err, component: entry.name }, 'start failed; stopping what was started');
          shuttingDown = true;
          await stopEntries(started, 'start failed');
          started = [];
          throw err;
        }
      }
      running = true;
      logger.info({ components: entries.map((e) => e.name) }, 'started');
    },

    stop(reason) {
      if (stopping) return stopping;
      shuttingDown = true;
      logger.info({ reason, timeoutMs }, 'shutting down');
      const toStop = running ? entries : started;
      running = false;
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => {
          logger.error({ reason, timeoutMs }, 'shutdown deadline exceeded; exiting with code 1');
          exit(1);
          resolve(false);
        }, timeoutMs);
      });
      stopping = Promise.race([stopEntries(toStop, reason), deadline]).finally(() => clearTimeout(timer));
      return stopping;
    },

    isReady() {
      return running && !shuttingDown && entries.every((e) => e.component.ready?.() ?? true);
    },

    isShuttingDown() {
      return shuttingDown;
    },

    installSignalHandlers() {
      let signals = 0;
      const onSignal = (signal: unknown) => {
        signals += 1;
        if (signals > 1) {
          logger.error({ signal }, 'second signal during shutdown; forcing exit');
          exit(1);
          return;
        }
        void lifecycle.stop(String(signal)).then((ok) => {
          if (proc.exitCode === undefined || proc.exitCode === null || proc.exitCode === 0) {
            proc.exitCode = ok ? 0 : 1;
          }
          // Unref'd: a process with nothing left exits by itself first, as it should.
          setTimeout(() => {
            logger.warn(
              { lingerMs, resources: activeResources() },
              'still running after a clean stop; exiting',
            );
            exit(Number(proc.exitCode ?? 0));
          }, lingerMs).unref();
        });
      };
      const onFatal = (kind: string) => (err: unknown) => {
        if (logger.fatal) logger.fatal({ err }, kind);
        else logger.error({ err }, kind);
        // Never 0: the process state is unknown after an uncaught error.
        proc.exitCode = 1;
        void lifecycle.stop(kind).finally(() => exit(1));
      };
      const onUncaught = onFatal('uncaughtException');
      const onRejection = onFatal('unhandledRejection');
      proc.on('SIGTERM', onSignal);
      proc.on('SIGINT', onSignal);
      proc.on('uncaughtException', onUncaught);
      proc.on('unhandledRejection', onRejection);
      return () => {
        proc.removeListener('SIGTERM', onSignal);
        proc.removeListener('SIGINT', onSignal);
        proc.removeListener('uncaughtException', onUncaught);
        proc.removeListener('unhandledRejection', onRejection);
      };
    },
  };
  return lifecycle;
}

/** What keeps the event loop alive, counted by kind (`{ Timeout: 2, TCPWRAP: 1 }`), for the log. */
function activeResources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

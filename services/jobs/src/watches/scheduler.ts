/**
 * Runs due watches on every gateway replica: each tick claims what is due with a lease (so a watch
 * runs once however many replicas look), runs it, and waits for the next tick. A tick that throws
 * is logged and the loop goes on; `stop` waits for the run in flight, at most `timeoutMs`.
 */
import type { Logger } from '@subx/ports';
import type { WatchesService } from './service.ts';

export interface WatchScheduler {
  start(): void;
  /** Runs what is due now (the loop's own step; tests call it). */
  tick(): Promise<number>;
  stop(timeoutMs: number): Promise<void>;
}

export function createWatchScheduler(deps: {
  service: Pick<WatchesService, 'runDue'>;
  pollMs: number;
  logger: Pick<Logger, 'warn'>;
}): WatchScheduler {
  let timer: NodeJS.Timeout | null = null;
  let inFlight: Promise<number> | null = null;
  let stopped = false;
  const tick = () => {
    inFlight ??= deps.service.runDue(10).finally(() => {
      inFlight = null;
    });
    return inFlight;
  };
  const loop = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      tick()
        .catch((err: unknown) => deps.logger.warn({ err }, 'a watch scheduler tick failed'))
        .finally(loop);
    }, deps.pollMs);
    timer.unref();
  };
  return {
    start() {
      stopped = false;
      loop();
    },
    tick,
    async stop(timeoutMs) {
      stopped = true;
      if (timer) clearTimeout(timer);
      if (!inFlight) return;
      let bound: NodeJS.Timeout | undefined;
      await Promise.race([
        inFlight.catch(() => 0),
        new Promise<void>((resolve) => {
          bound = setTimeout(resolve, timeoutMs);
          bound.unref();
        }),
      ]);
      clearTimeout(bound);
    },
  };
}

/**
 * The safety net under a member: whatever kafkajs gave up on (a crash it does not restart), the
 * member is started again, with a growing delay, until it runs or is stopped. A member that
 * silently stopped consuming left billing without usage events in one CI run.
 */
import type { Consumer, ConsumerRunConfig } from 'kafkajs';
import type { BusObserver } from '../port.ts';
import type { Logger } from '../../logger.ts';
import { backoffDelay } from '../../backoff.ts';

export interface RevivalOptions {
  consumer: Consumer;
  groupId: string;
  /** The first delay; it doubles per revive up to 30 s and is reset by `progressed`. */
  initialDelayMs: number;
  /** False once the member is stopping or crashed (on purpose): no revive then. */
  isRunning(): boolean;
  logger: Logger | undefined;
  observer: BusObserver | undefined;
}

export interface Revival {
  /** A message was handled: the next revive waits the initial delay again. */
  progressed(): void;
  /** From now on a crash kafkajs does not restart starts the member again with `runConfig`. */
  watch(runConfig: ConsumerRunConfig): void;
}

export function createRevival(options: RevivalOptions): Revival {
  const { consumer, groupId, logger, observer } = options;
  // Crashes since the last handled message: a member that keeps crashing (a message it can neither
  // handle nor dead-letter) is retried less and less often; one handled message resets it.
  let crashes = 0;
  let reviving = false;

  const revive = (error: unknown, runConfig: ConsumerRunConfig): void => {
    if (!options.isRunning()) return;
    reviving = true;
    crashes += 1;
    const retryInMs = backoffDelay({ baseMs: options.initialDelayMs, maxMs: 30_000 }, crashes);
    logger?.error({ groupId, err: String(error), retryInMs }, 'consumer stopped; starting it again');
    observer?.consumerRevived?.(groupId);
    const timer = setTimeout(() => {
      void (async () => {
        if (!options.isRunning()) return void (reviving = false);
        try {
          await consumer.connect();
          // run() reports a failed start through CRASH (which brings us back here), not by throwing.
          await consumer.run(runConfig);
          reviving = false;
        } catch (err) {
          revive(err, runConfig);
        }
      })();
    }, retryInMs);
    timer.unref?.();
  };

  return {
    progressed() {
      crashes = 0;
    },
    watch(runConfig) {
      consumer.on(consumer.events.CRASH, (event) => {
        if (!event.payload.restart && !reviving) revive(event.payload.error, runConfig);
      });
    },
  };
}

import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '@subx/ports';
import { createLifecycle } from './lifecycle.ts';
import type { ProcessLike } from './lifecycle.ts';
import { createLogger } from './logger.ts';

function setup(shutdownTimeoutMs = 5_000, lingerMs = 60_000) {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    service: 't',
    level: 'debug',
    destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) },
  });
  const exits: number[] = [];
  const proc = new EventEmitter() as EventEmitter & ProcessLike;
  const lifecycle = createLifecycle({
    logger,
    shutdownTimeoutMs,
    exit: (c) => void exits.push(c),
    process: proc,
    lingerMs,
  });
  return { lifecycle, lines, exits, proc };
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('lifecycle', () => {
  it('starts in registration order and stops in reverse, each awaited', async () => {
    const { lifecycle } = setup();
    const events: string[] = [];
    for (const name of ['mongo', 'kafka', 'grpc']) {
      lifecycle.register(name, {
        start: async () => {
          await tick();
          events.push(`start ${name}`);
        },
        stop: async () => {
          events.push(`stop ${name} begin`);
          await tick();
          events.push(`stop ${name} end`);
        },
      });
    }
    await lifecycle.start();
    expect(lifecycle.isReady()).toBe(true);
    expect(await lifecycle.stop('test')).toBe(true);
    expect(events).toEqual([
      'start mongo',
      'start kafka',
      'start grpc',
      'stop grpc begin',
      'stop grpc end',
      'stop kafka begin',
      'stop kafka end',
      'stop mongo begin',
      'stop mongo end',
    ]);
  });

  it('marks not-ready before the first stop runs', async () => {
    const { lifecycle } = setup();
    const readyDuringStop: boolean[] = [];
    lifecycle.register('a', { stop: () => void readyDuringStop.push(lifecycle.isReady()) });
    await lifecycle.start();
    const stopping = lifecycle.stop('SIGTERM');
    expect(lifecycle.isReady()).toBe(false);
    expect(lifecycle.isShuttingDown()).toBe(true);
    await stopping;
    expect(readyDuringStop).toEqual([false]);
  });

  it('isReady reflects component readiness', async () => {
    const { lifecycle } = setup();
    let redisUp = false;
    lifecycle.register('redis', { ready: () => redisUp });
    expect(lifecycle.isReady()).toBe(false); // not started
    await lifecycle.start();
    expect(lifecycle.isReady()).toBe(false);
    redisUp = true;
    expect(lifecycle.isReady()).toBe(true);
  });

  it('stop is idempotent and keeps going after a failing stop', async () => {
    const { lifecycle, lines } = setup();
    const stopped: string[] = [];
    lifecycle.register('first', { stop: () => void stopped.push('first') });
    lifecycle.register('broken', {
      stop: () => {
        throw new Error('close failed');
      },
    });
    await lifecycle.start();
    const a = lifecycle.stop('x');
    const b = lifecycle.stop('y');
    expect(a).toBe(b);
    expect(await a).toBe(false);
    expect(stopped).toEqual(['first']);
    expect(lines.some((l) => l.msg === 'stop failed' && l.component === 'broken')).toBe(true);
  });

  it('a failing start stops the components already started and rethrows', async () => {
    const { lifecycle } = setup();
    const events: string[] = [];
    lifecycle.register('a', {
      start: () => void events.push('start a'),
      stop: () => void events.push('stop a'),
    });
    lifecycle.register('b', {
      start: () => {
        throw new Error('cannot connect');
      },
      stop: () => void events.push('stop b'),
    });
    lifecycle.register('c', { start: () => void events.push('start c') });
    await expect(lifecycle.start()).rejects.toThrow('cannot connect');
    expect(events).toEqual(['start a', 'stop a']);
  });

  it('exits 1 when the deadline passes', async () => {
    const { lifecycle, exits, lines } = setup(50);
    lifecycle.register('stuck', { stop: () => new Promise(() => {}) });
    await lifecycle.start();
    expect(await lifecycle.stop('SIGTERM')).toBe(false);
    expect(exits).toEqual([1]);
    expect(lines.some((l) => String(l.msg).includes('deadline exceeded'))).toBe(true);
  });

  it('SIGTERM stops gracefully and sets exitCode 0 without exiting', async () => {
    const { lifecycle, exits, proc } = setup();
    const gate = deferred();
    let stopped = false;
    lifecycle.register('server', {
      stop: async () => {
        await gate.promise;
        stopped = true;
      },
    });
    await lifecycle.start();
    const uninstall = lifecycle.installSignalHandlers();
    proc.emit('SIGTERM', 'SIGTERM');
    expect(lifecycle.isReady()).toBe(false);
    gate.resolve();
    await lifecycle.stop('again');
    await tick();
    expect(stopped).toBe(true);
    expect(proc.exitCode).toBe(0);
    expect(exits).toEqual([]);
    uninstall();
    expect(proc.listenerCount('SIGTERM')).toBe(0);
  });

  it('a process still alive after a clean stop is exited with its code, saying what held it', async () => {
    const { lifecycle, exits, proc, lines } = setup(1_000, 30);
    lifecycle.register('client', { stop: () => undefined });
    await lifecycle.start();
    lifecycle.installSignalHandlers();
    proc.emit('SIGTERM', 'SIGTERM');
    await lifecycle.stop('again');
    expect(exits).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(exits).toEqual([0]);
    expect(lines.find((l) => l.msg === 'still running after a clean stop; exiting')).toMatchObject({
      level: 'warn',
      lingerMs: 30,
      resources: expect.any(Object),
    });
  });

  it('a second signal forces exit 1', async () => {
    const { lifecycle, exits, proc } = setup();
    lifecycle.register('slow', { stop: () => new Promise(() => {}) });
    await lifecycle.start();
    lifecycle.installSignalHandlers();
    proc.emit('SIGINT', 'SIGINT');
    expect(exits).toEqual([]);
    proc.emit('SIGINT', 'SIGINT');
    expect(exits).toEqual([1]);
  });

  it.each(['uncaughtException', 'unhandledRejection'])('%s → log, stop, exit 1 (never 0)', async (event) => {
    const { lifecycle, exits, proc, lines } = setup();
    let stopped = false;
    lifecycle.register('db', { stop: () => void (stopped = true) });
    await lifecycle.start();
    lifecycle.installSignalHandlers();
    proc.emit(event, new Error('kaboom'));
    expect(proc.exitCode).toBe(1);
    await lifecycle.stop('wait');
    await tick();
    expect(stopped).toBe(true);
    expect(exits).toEqual([1]);
    expect(lines.some((l) => l.level === 'fatal' && l.msg === event)).toBe(true);
  });

  it('takes any Logger: without a fatal level, an uncaught error is logged at error', async () => {
    const errors: { fields: object; message?: string }[] = [];
    const proc = new EventEmitter() as EventEmitter & ProcessLike;
    const lifecycle = createLifecycle({
      logger: { ...silentLogger, error: (fields, message) => void errors.push({ fields, message }) },
      exit: () => {},
      process: proc,
    });
    const err = new Error('kaboom');
    lifecycle.installSignalHandlers();
    proc.emit('uncaughtException', err);
    await lifecycle.stop('wait');
    expect(errors).toEqual([{ fields: { err }, message: 'uncaughtException' }]);
  });

  it('a component that finishes starting after stop() began is stopped too', async () => {
    const { lifecycle } = setup();
    const gate = deferred();
    const events: string[] = [];
    lifecycle.register('slow-start', {
      start: () => gate.promise,
      stop: () => void events.push('stop slow-start'),
    });
    const starting = lifecycle.start();
    const stopping = lifecycle.stop('SIGTERM');
    gate.resolve();
    await starting;
    await stopping;
    expect(events).toEqual(['stop slow-start']);
    expect(lifecycle.isReady()).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { DependenciesUnreachableError, waitForDependencies, waitForEngines } from './dependencies.ts';
import type { StartupDependency } from './dependencies.ts';
import { startupProblem } from './startup-errors.ts';

/** Log lines kept for assertions. */
function recordingLogger() {
  const lines: { level: 'info' | 'warn'; fields: Record<string, unknown>; msg: string }[] = [];
  return {
    lines,
    logger: {
      info: (fields: Record<string, unknown>, msg: string) => void lines.push({ level: 'info', fields, msg }),
      warn: (fields: Record<string, unknown>, msg: string) => void lines.push({ level: 'warn', fields, msg }),
    } as never,
  };
}

/** A dependency that refuses `refusals` times, then answers. */
function answeringAfter(refusals: number, name = 'kafka'): StartupDependency & { calls: number } {
  const dependency = {
    name,
    target: `${name}:1`,
    variable: `${name.toUpperCase()}_URL`,
    calls: 0,
    async check() {
      dependency.calls++;
      if (dependency.calls <= refusals) throw new Error(`connect ECONNREFUSED ${name}:1\n    at stack`);
    },
  };
  return dependency;
}

const fast = { initialDelayMs: 5, maxDelayMs: 20 };

describe('waitForDependencies', () => {
  it('waits through refusals and resolves once every dependency answers, saying on what it waited', async () => {
    const kafka = answeringAfter(3, 'kafka');
    const mongo = answeringAfter(0, 'mongo');
    const { lines, logger } = recordingLogger();
    await waitForDependencies([kafka, mongo], { timeoutMs: 5_000, logger, ...fast });
    expect(kafka.calls).toBe(4);
    expect(mongo.calls).toBe(1);
    const warnings = lines.filter((l) => l.level === 'warn');
    expect(warnings).toHaveLength(3);
    expect(warnings[0]?.fields).toMatchObject({
      dependency: 'kafka',
      target: 'kafka:1',
      variable: 'KAFKA_URL',
      attempt: 1,
      // The first line of the error only: no stack in the log.
      err: 'connect ECONNREFUSED kafka:1',
    });
    expect(lines.at(-1)).toMatchObject({ level: 'info', fields: { dependency: 'kafka', attempts: 4 } });
  });

  it('gives up after the timeout and names every engine that never answered, with its variable', async () => {
    const kafka = answeringAfter(Number.POSITIVE_INFINITY, 'kafka');
    const redis = answeringAfter(Number.POSITIVE_INFINITY, 'redis');
    const mongo = answeringAfter(0, 'mongo');
    const { logger } = recordingLogger();
    const started = Date.now();
    const error = await waitForDependencies([kafka, redis, mongo], { timeoutMs: 300, logger, ...fast }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(error).toBeInstanceOf(DependenciesUnreachableError);
    expect((error as DependenciesUnreachableError).unreachable.map((u) => u.name)).toEqual([
      'kafka',
      'redis',
    ]);
    // What the person starting it reads: one line, no stack.
    expect(startupProblem(error)).toBe(
      'kafka (kafka:1, KAFKA_URL) did not answer within 0.3 s (STARTUP_DEPENDENCY_TIMEOUT_MS): connect ECONNREFUSED kafka:1; ' +
        'redis (redis:1, REDIS_URL) did not answer within 0.3 s (STARTUP_DEPENDENCY_TIMEOUT_MS): connect ECONNREFUSED redis:1',
    );
  });

  it('never repeats the credentials of a URL an error message carries', async () => {
    const leaky: StartupDependency = {
      name: 'mongo',
      target: 'mongo:27017',
      variable: 'MONGO_URL',
      check: async () => {
        throw new Error('cannot reach mongodb://ledger:hunter2@mongo:27017/subx');
      },
    };
    const { lines, logger } = recordingLogger();
    const error = (await waitForDependencies([leaky], { timeoutMs: 100, logger, ...fast }).catch(
      (e: unknown) => e,
    )) as Error;
    expect(error.message).toContain('cannot reach mongodb://mongo:27017/subx');
    expect(JSON.stringify(lines) + error.message).not.toContain('hunter2');
  });

  it('bounds a check that never settles', async () => {
    const hanging: StartupDependency = {
      name: 'mongo',
      target: 'mongo:27017',
      variable: 'MONGO_URL',
      check: () => new Promise(() => undefined),
    };
    const { logger } = recordingLogger();
    const error = (await waitForDependencies([hanging], {
      timeoutMs: 400,
      checkTimeoutMs: 100,
      logger,
      ...fast,
    }).catch((e: unknown) => e)) as DependenciesUnreachableError;
    expect(error.unreachable[0]?.lastError).toMatch(/^no answer within \d+ ms$/);
  });

  it('has nothing to wait for without engines', async () => {
    const { lines, logger } = recordingLogger();
    await waitForDependencies([], { timeoutMs: 1, logger });
    expect(lines).toEqual([]);
  });
});

describe('waitForEngines', () => {
  it('closes the adapters when an engine never answers, and rethrows', async () => {
    let closed = 0;
    const adapters = {
      dependencies: [answeringAfter(Number.POSITIVE_INFINITY, 'redis')],
      close: async () => void closed++,
    };
    const { logger } = recordingLogger();
    await expect(
      waitForEngines(adapters, { STARTUP_DEPENDENCY_TIMEOUT_MS: 50 }, logger),
    ).rejects.toBeInstanceOf(DependenciesUnreachableError);
    expect(closed).toBe(1);
  });

  it('leaves them open when every engine answers', async () => {
    let closed = 0;
    const adapters = { dependencies: [answeringAfter(0, 'redis')], close: async () => void closed++ };
    const { logger } = recordingLogger();
    await waitForEngines(adapters, { STARTUP_DEPENDENCY_TIMEOUT_MS: 1_000 }, logger);
    expect(closed).toBe(0);
  });
});

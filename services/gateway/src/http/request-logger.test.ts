import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '@subx/service-kit';
import { duplicateKeys } from '@subx/testing/log-lines';
import { listenerOptions } from './listener-options.ts';
import { logAccess } from './access-log.ts';

const CONFIG = {
  BODY_LIMIT_BYTES: 1_000,
  REQUEST_RECEIVE_TIMEOUT_MS: 5_000,
  CONNECTION_IDLE_TIMEOUT_MS: 5_000,
};

function setup(level = 'info') {
  const raw: string[] = [];
  const logger = createLogger({
    service: 'gateway',
    level,
    destination: { write: (l: string) => void raw.push(l) },
  });
  let children = 0;
  const child = logger.child;
  // Counts the pino children made for requests (bound to a request id): the point of the lazy
  // request logger. pino's children inherit this property, so a grandchild would count too.
  logger.child = function countedChild(this: typeof logger, ...args: Parameters<typeof child>) {
    if ('request_id' in args[0]) children += 1;
    return child.apply(this, args);
  } as typeof logger.child;
  const app = Fastify(listenerOptions(CONFIG, logger));
  app.addHook('onResponse', (request, reply, done) => {
    logAccess(request, reply);
    done();
  });
  app.get('/quiet', async () => ({ ok: true }));
  app.get('/debug', async (request) => {
    request.log.debug({ detail: 1 }, 'below the level');
    return { ok: true };
  });
  app.get('/talks', async (request) => {
    request.log.warn({ apiKey: 'sxk_v1_secret', n: 1 }, 'first');
    request.log.info('second');
    request.log.child({ part: 'x' }).info('from a grandchild');
    return { ok: true };
  });
  return {
    app,
    lines: () => raw.map((l) => JSON.parse(l) as Record<string, unknown>),
    raw,
    children: () => children,
  };
}

describe('the lazy request logger', () => {
  let close: (() => Promise<unknown>) | undefined;
  afterEach(async () => {
    await close?.();
  });

  it('makes no pino child for a request that logs nothing but its access line, which carries the request id', async () => {
    const { app, lines, raw, children } = setup();
    close = () => app.close();
    const res = await app.inject({ method: 'GET', url: '/quiet' });
    expect(res.statusCode).toBe(200);
    expect(children()).toBe(0);
    expect(lines()).toEqual([
      expect.objectContaining({
        msg: 'request',
        request_id: res.headers['x-request-id'] ?? expect.any(String),
        status: 200,
      }),
    ]);
    expect(raw.flatMap(duplicateKeys)).toEqual([]);
  });

  it('makes no child for a line below the level either', async () => {
    const { app, lines, children } = setup('info');
    close = () => app.close();
    await app.inject({ method: 'GET', url: '/debug' });
    expect(children()).toBe(0);
    expect(lines().map((l) => l.msg)).toEqual(['request']);
  });

  it('logs through one real child, bound to the request id and censored, once something logs', async () => {
    const { app, lines, raw, children } = setup();
    close = () => app.close();
    await app.inject({ method: 'GET', url: '/talks' });
    expect(children()).toBe(1);
    const [first, second, grandchild, access] = lines();
    const id = access?.request_id;
    expect(typeof id).toBe('string');
    expect(first).toMatchObject({ level: 'warn', msg: 'first', request_id: id, n: 1, apiKey: '[redacted]' });
    expect(second).toMatchObject({ level: 'info', msg: 'second', request_id: id });
    expect(grandchild).toMatchObject({ msg: 'from a grandchild', request_id: id, part: 'x' });
    expect(raw.join('')).not.toContain('sxk_v1_secret');
    expect(raw.flatMap(duplicateKeys)).toEqual([]);
  });

  it('keeps a level set before the first line', async () => {
    const { app, lines } = setup('info');
    close = () => app.close();
    app.get('/verbose', async (request) => {
      request.log.level = 'debug';
      expect(request.log.level).toBe('debug');
      request.log.debug('now shown');
      return {};
    });
    await app.inject({ method: 'GET', url: '/verbose' });
    expect(lines().map((l) => l.msg)).toEqual(['now shown', 'request']);
  });
});

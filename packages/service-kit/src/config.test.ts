import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  ConfigError,
  boolEnv,
  csv,
  csvOf,
  durationMs,
  durationMsBetween,
  grpcAddress,
  httpUrl,
  intBetween,
  jsonOf,
  loadConfig,
  logLevel,
  nameString,
  numberBetween,
  serviceBasicsEnv,
  port,
  positiveInt,
  redactConfig,
  secret,
  secretKeysOf,
  urlString,
  urlStringOf,
} from './config.ts';

const Schema = z.object({
  GRPC_PORT: port.default(50051),
  KAFKA_BROKERS: csv,
  MONGO_URL: urlStringOf(['mongodb:', 'mongodb+srv:']),
  LEDGER_ENABLED: boolEnv.default(true),
  SHUTDOWN_TIMEOUT_MS: durationMs.default(10_000),
  MAX_ITEMS: positiveInt.default(5),
  OPENAI_API_KEY: secret(z.string().min(20, { error: 'must be at least 20 characters' })),
  ADMIN_TOKEN: secret().optional(),
});

const valid = {
  KAFKA_BROKERS: 'a:9092, b:9092,',
  MONGO_URL: 'mongodb://user:hunter2pass@mongo:27017/subx',
  OPENAI_API_KEY: 'sk-0123456789abcdefghijklmnop',
};

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('parses a valid env into typed values and applies defaults', () => {
    const config = loadConfig(Schema, {
      ...valid,
      GRPC_PORT: '0',
      LEDGER_ENABLED: '0',
      SHUTDOWN_TIMEOUT_MS: '2s',
    });
    expect(config).toEqual({
      GRPC_PORT: 0,
      KAFKA_BROKERS: ['a:9092', 'b:9092'],
      MONGO_URL: valid.MONGO_URL,
      LEDGER_ENABLED: false,
      SHUTDOWN_TIMEOUT_MS: 2000,
      MAX_ITEMS: 5,
      OPENAI_API_KEY: valid.OPENAI_API_KEY,
      ADMIN_TOKEN: undefined,
    });
  });

  it('treats empty strings as unset', () => {
    const config = loadConfig(Schema, { ...valid, GRPC_PORT: '', ADMIN_TOKEN: '' });
    expect(config.GRPC_PORT).toBe(50051);
    expect(config.ADMIN_TOKEN).toBeUndefined();
  });

  it('reports every bad variable at once, by name and reason', () => {
    const err = configError(() =>
      loadConfig(Schema, {
        GRPC_PORT: '70000',
        KAFKA_BROKERS: ' , ',
        MONGO_URL: 'redis://localhost:6379',
        LEDGER_ENABLED: 'yes',
        SHUTDOWN_TIMEOUT_MS: '-5',
        MAX_ITEMS: '0',
      }),
    );
    const byKey = Object.fromEntries(err.issues.map((i) => [i.key, i.message]));
    expect(Object.keys(byKey).sort()).toEqual(
      [
        'GRPC_PORT',
        'KAFKA_BROKERS',
        'LEDGER_ENABLED',
        'MAX_ITEMS',
        'MONGO_URL',
        'OPENAI_API_KEY',
        'SHUTDOWN_TIMEOUT_MS',
      ].sort(),
    );
    expect(byKey.GRPC_PORT).toMatch(/port/);
    expect(byKey.KAFKA_BROKERS).toMatch(/at least one/);
    expect(byKey.MONGO_URL).toMatch(/mongodb:/);
    expect(byKey.LEDGER_ENABLED).toMatch(/true, false, 1, 0/);
    expect(byKey.SHUTDOWN_TIMEOUT_MS).toMatch(/positive duration/);
    expect(byKey.MAX_ITEMS).toMatch(/positive integer/);
    expect(byKey.OPENAI_API_KEY).toBe('is required');
    for (const key of Object.keys(byKey)) expect(err.message).toContain(`${key}: `);
    expect(err.message).toMatch(/^Invalid configuration \(7 problems\)/);
  });

  it.each([['TRUE'], ['yes'], ['on'], ['2'], ['']])(
    'boolEnv rejects %j rather than reading it as false',
    (v) => {
      const S = z.object({ FLAG: boolEnv });
      expect(() => loadConfig(S, { FLAG: v })).toThrow(ConfigError);
    },
  );

  it.each([
    ['true', true],
    ['1', true],
    ['false', false],
    ['0', false],
  ])('boolEnv %j → %s', (v, expected) => {
    expect(loadConfig(z.object({ FLAG: boolEnv }), { FLAG: v }).FLAG).toBe(expected);
  });

  it.each([['12abc'], ['1.5'], ['-1'], ['0x10'], ['1e3']])('port rejects %j', (v) => {
    expect(() => loadConfig(z.object({ P: port }), { P: v })).toThrow(/P: must be an integer port/);
  });

  it('durationMs accepts units', () => {
    const S = z.object({ D: durationMs });
    expect(loadConfig(S, { D: '250' }).D).toBe(250);
    expect(loadConfig(S, { D: '250ms' }).D).toBe(250);
    expect(loadConfig(S, { D: '3m' }).D).toBe(180_000);
    expect(loadConfig(S, { D: '1h' }).D).toBe(3_600_000);
    expect(() => loadConfig(S, { D: '0' })).toThrow(ConfigError);
    expect(() => loadConfig(S, { D: '5 minutes' })).toThrow(ConfigError);
  });

  it('urlString requires an absolute URL', () => {
    const S = z.object({ U: urlString });
    expect(loadConfig(S, { U: 'http://x:1/a' }).U).toBe('http://x:1/a');
    expect(() => loadConfig(S, { U: 'localhost:6379/' })).not.toThrow(); // "localhost:" parses as a scheme
    expect(() => loadConfig(S, { U: '/relative' })).toThrow(/U: must be an absolute URL/);
  });

  it('never puts secret values (or URL values) into the error message', () => {
    const S = z.object({
      API_KEY: secret(
        z.string().refine((v) => v.startsWith('sk-'), { error: (iss) => `bad key ${String(iss.input)}` }),
      ),
      PEPPER: z.string().min(64),
      MONGO_URL: urlStringOf(['mongodb:']),
    });
    const err = configError(() =>
      loadConfig(
        S,
        { API_KEY: 'leaky-secret-value', PEPPER: 'short-pepper', MONGO_URL: 'http://u:pw-in-url@h' },
        {
          secrets: ['PEPPER'],
        },
      ),
    );
    expect(err.issues.map((i) => i.key).sort()).toEqual(['API_KEY', 'MONGO_URL', 'PEPPER']);
    expect(err.message).not.toContain('leaky-secret-value');
    expect(err.message).not.toContain('short-pepper');
    expect(err.message).not.toContain('pw-in-url');
  });

  it('collects cross-field rules from superRefine', () => {
    const S = z.object({ MIN: positiveInt, MAX: positiveInt }).superRefine((c, ctx) => {
      if (c.MIN > c.MAX) ctx.addIssue({ code: 'custom', path: ['MAX'], message: 'must be >= MIN' });
    });
    expect(() => loadConfig(S, { MIN: '5', MAX: '2' })).toThrow(/MAX: must be >= MIN/);
  });

  it('does not read process.env unless asked to', () => {
    const S = z.object({ ONLY_IN_ARG: z.string() });
    expect(loadConfig(S, { ONLY_IN_ARG: 'x' })).toEqual({ ONLY_IN_ARG: 'x' });
  });
});

describe('secret keys and redactConfig', () => {
  it('finds keys marked secret through optional/default wrappers and refinements', () => {
    const S = z.object({
      A: secret(),
      B: secret().optional(),
      C: secret(z.string().min(3)).default('abc'),
      D: secret(z.string()).min(2),
      E: z.string(),
    });
    expect(secretKeysOf(S).sort()).toEqual(['A', 'B', 'C', 'D']);
  });

  it('replaces set secrets, keeps unset ones visible and strips URL passwords', () => {
    const config = loadConfig(Schema, { ...valid, ADMIN_TOKEN: undefined });
    const safe = redactConfig(config, secretKeysOf(Schema));
    expect(safe.OPENAI_API_KEY).toBe('[redacted]');
    expect(safe.ADMIN_TOKEN).toBeUndefined();
    expect(safe.MONGO_URL).toBe('mongodb://user:[redacted]@mongo:27017/subx');
    expect(safe.GRPC_PORT).toBe(50051);
    expect(JSON.stringify(safe)).not.toContain('sk-0123');
    expect(JSON.stringify(safe)).not.toContain('hunter2pass');
  });
});

describe('the shared env helpers every service uses', () => {
  const one = <T extends z.ZodType>(schema: T, value: string | undefined) =>
    (loadConfig(z.object({ V: schema }), { V: value }) as { V: z.output<T> }).V;
  const problem = <T extends z.ZodType>(schema: T, value: string) =>
    configError(() => one(schema, value)).message;

  it('a single bad variable is one line naming it and what it expected', () => {
    const message = problem(serviceBasicsEnv.SHUTDOWN_TIMEOUT_MS, 'soon');
    expect(message).toBe(
      'Invalid configuration: V: must be a positive duration in ms, or with a unit: 500ms, 10s, 2m, 1h, 7d',
    );
    expect(message).not.toContain('\n');
  });

  it('LOG_LEVEL, SHUTDOWN_TIMEOUT_MS and STARTUP_DEPENDENCY_TIMEOUT_MS read the same for every service', () => {
    const S = z.object(serviceBasicsEnv);
    expect(loadConfig(S, {})).toEqual({
      LOG_LEVEL: 'info',
      SHUTDOWN_TIMEOUT_MS: 10_000,
      STARTUP_DEPENDENCY_TIMEOUT_MS: 60_000,
    });
    expect(
      loadConfig(S, { LOG_LEVEL: 'debug', SHUTDOWN_TIMEOUT_MS: '15s', STARTUP_DEPENDENCY_TIMEOUT_MS: '2m' }),
    ).toEqual({
      LOG_LEVEL: 'debug',
      SHUTDOWN_TIMEOUT_MS: 15_000,
      STARTUP_DEPENDENCY_TIMEOUT_MS: 120_000,
    });
    // Below a second is a typo (ms meant as s), above an hour a start that never ends.
    expect(() => loadConfig(S, { STARTUP_DEPENDENCY_TIMEOUT_MS: '60' })).toThrow(
      /STARTUP_DEPENDENCY_TIMEOUT_MS: must be a duration between 1000 and 3600000 ms/,
    );
    expect(problem(logLevel, 'loud')).toMatch(
      /V: must be one of fatal, error, warn, info, debug, trace, silent$/,
    );
  });

  it('nameString trims and refuses blanks; grpcAddress wants host:port', () => {
    expect(one(nameString, ' billing.credit-usage.v1 ')).toBe('billing.credit-usage.v1');
    expect(problem(nameString, '   ')).toMatch(/V: must not be blank/);
    expect(one(grpcAddress, 'extractor:50051')).toBe('extractor:50051');
    expect(one(grpcAddress, 'dns:///extractor.subx.svc:50051')).toBe('dns:///extractor.subx.svc:50051');
    expect(problem(grpcAddress, 'extractor')).toMatch(/V: must be a host:port address/);
  });

  it('intBetween and numberBetween refuse values outside their range', () => {
    expect(one(intBetween(0, 10), '10')).toBe(10);
    expect(problem(intBetween(0, 10), '11')).toMatch(/V: must be an integer between 0 and 10/);
    expect(problem(intBetween(0, 10), '2.5')).toMatch(/between 0 and 10/);
    expect(one(numberBetween(0, 1), '0.25')).toBe(0.25);
    expect(problem(numberBetween(0, 1), '2')).toMatch(/V: must be a number between 0 and 1/);
    expect(problem(numberBetween(0, 1), '1e-1')).toMatch(/between 0 and 1/);
  });

  it('durationMsBetween accepts units and 0 only when the range starts at 0', () => {
    expect(one(durationMsBetween(0, 60_000), '0')).toBe(0);
    expect(one(durationMsBetween(0, 60_000), '30s')).toBe(30_000);
    expect(problem(durationMsBetween(0, 60_000), '2m')).toMatch(
      /V: must be a duration between 0 and 60000 ms/,
    );
    expect(problem(durationMsBetween(100, 1_000), '0')).toMatch(/between 100 and 1000/);
  });

  it('httpUrl takes http(s) only; csvOf checks each item and names its index', () => {
    expect(one(httpUrl, 'https://x.example/a')).toBe('https://x.example/a');
    expect(problem(httpUrl, 'ftp://x.example')).toMatch(/V: must be an http\(s\) URL/);
    expect(one(csvOf(httpUrl), 'http://a:1, https://b:2,')).toEqual(['http://a:1', 'https://b:2']);
    const err = configError(() => one(csvOf(httpUrl), 'http://a:1, socks5://u:pw@b:2'));
    expect(err.issues).toEqual([{ key: 'V.1', message: 'must be an http(s) URL' }]);
  });

  it('jsonOf: "must be JSON", or the schema\'s issues at their path inside the value', () => {
    const S = jsonOf(z.strictObject({ limits: z.object({ pro: z.number().int().positive() }).optional() }));
    expect(one(S, '{"limits":{"pro":5}}')).toEqual({ limits: { pro: 5 } });
    expect(problem(S, '{not json')).toMatch(/V: must be JSON/);
    const err = configError(() => one(S, '{"limits":{"pro":-1},"extra":1}'));
    expect(err.issues.map((i) => i.key).sort()).toEqual(['V', 'V.limits.pro']);
  });
});

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { silentLogger } from '@subx/ports';
import { ConfigError, loadConfig } from '../config.ts';
import { startupProblem } from '../startup-errors.ts';
import {
  SchemaRegistryStartupError,
  registerSchemasAtStartup,
  schemaRegistryEnv,
  schemaRegistryFromConfig,
} from './schema-registry-env.ts';

const schema = z.object(schemaRegistryEnv);
const load = (env: Record<string, string>) => schemaRegistryFromConfig(loadConfig(schema, env));

describe('SCHEMA_REGISTRY_* settings', () => {
  it('is off without a URL, and nothing else is required', () => {
    expect(load({})).toBeUndefined();
  });

  it('reads the URL, basic auth and the start-up bound (30 s by default)', () => {
    expect(load({ SCHEMA_REGISTRY_URL: 'http://registry:8080/apis/ccompat/v7' })).toEqual({
      url: 'http://registry:8080/apis/ccompat/v7',
      timeoutMs: 30_000,
    });
    expect(
      load({
        SCHEMA_REGISTRY_URL: 'https://registry.internal',
        SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO: 'team:p@ss:word',
        SCHEMA_REGISTRY_STARTUP_TIMEOUT_MS: '2m',
      }),
    ).toEqual({ url: 'https://registry.internal', basicAuthUserInfo: 'team:p@ss:word', timeoutMs: 120_000 });
  });

  it('names each bad variable, never echoing the password', () => {
    const error = (() => {
      try {
        load({
          SCHEMA_REGISTRY_URL: 'http://team:secret@registry:8080',
          SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO: 'no-colon-secret',
          SCHEMA_REGISTRY_STARTUP_TIMEOUT_MS: '10',
        });
      } catch (err) {
        return err as ConfigError;
      }
      throw new Error('loaded');
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.issues.map((i) => i.key).sort()).toEqual([
      'SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO',
      'SCHEMA_REGISTRY_STARTUP_TIMEOUT_MS',
      'SCHEMA_REGISTRY_URL',
    ]);
    expect(error.message).toContain('must not hold credentials (set SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO)');
    expect(error.message).toContain('must be user:password');
    expect(error.message).not.toContain('no-colon-secret');
  });

  it('refuses credentials with no registry to send them to', () => {
    expect(() => load({ SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO: 'team:secret' })).toThrow(
      'SCHEMA_REGISTRY_URL: is required with SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO',
    );
  });

  it('reports a registry that failed the start as one line naming what to check', () => {
    const problem = startupProblem(
      new SchemaRegistryStartupError(
        new Error('schema registry http://r:8080: billing.credit-usage.v1-value …'),
      ),
    );
    expect(problem).toMatch(/^schema registry http:\/\/r:8080: billing\.credit-usage\.v1-value/);
    expect(problem).toContain('check SCHEMA_REGISTRY_URL');
  });
});

describe('registerSchemasAtStartup', () => {
  const logger = silentLogger;
  const registry = { url: 'http://registry:8080', basicAuthUserInfo: 'team:secret', timeoutMs: 5_000 };
  const ids = new Map([
    ['billing.credit-usage.v1', Buffer.from([1, 2])],
    ['jobs.events.v1', Buffer.from([3])],
  ]);

  it('registers with the registry settings and the logger, and fills the map the bus reads', async () => {
    const calls: unknown[] = [];
    const valueSchemaIds = new Map([['stale.v1', Buffer.from([9])]]);
    await registerSchemasAtStartup({
      registry,
      bus: 'kafka',
      logger,
      register: async (options) => {
        calls.push(options);
        return ids;
      },
      valueSchemaIds,
    });
    expect(calls).toEqual([{ ...registry, logger }]);
    expect(valueSchemaIds).toEqual(new Map([['stale.v1', Buffer.from([9])], ...ids]));
  });

  it('does nothing without a registry or on the in-process bus', async () => {
    const valueSchemaIds = new Map<string, Buffer>();
    let calls = 0;
    const register = async () => {
      calls++;
      return ids;
    };
    await registerSchemasAtStartup({ registry: undefined, bus: 'kafka', logger, register, valueSchemaIds });
    await registerSchemasAtStartup({ registry, bus: 'in-process', logger, register, valueSchemaIds });
    expect(calls).toBe(0);
    expect(valueSchemaIds.size).toBe(0);
  });

  it('stops the start with a SchemaRegistryStartupError that keeps the cause', async () => {
    const cause = new Error('schema registry http://registry:8080: jobs.events.v1-value: HTTP 409');
    const valueSchemaIds = new Map<string, Buffer>();
    const failed = await registerSchemasAtStartup({
      registry,
      bus: 'kafka',
      logger,
      register: () => Promise.reject(cause),
      valueSchemaIds,
    }).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(SchemaRegistryStartupError);
    expect((failed as Error).cause).toBe(cause);
    expect(startupProblem(failed)).toMatch(
      /^schema registry http:\/\/registry:8080: jobs\.events\.v1-value: HTTP 409 \(check/,
    );
    expect(valueSchemaIds.size).toBe(0);
  });
});

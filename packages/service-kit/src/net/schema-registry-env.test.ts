import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, loadConfig } from '../config.ts';
import { startupProblem } from '../startup-errors.ts';
import {
  SchemaRegistryStartupError,
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

/**
 * The schema registry from the environment, for every service that produces events (gateway,
 * extractor, and `npm start` with a broker): each such service's config schema spreads
 * `schemaRegistryEnv`, and `schemaRegistryFromConfig(config)` gives @subx/ports'
 * `registerTopicSchemas` its options, or undefined when no registry is configured.
 *
 *   SCHEMA_REGISTRY_URL                   the registry's Confluent-compatible API (Confluent Schema
 *                                         Registry; Apicurio: http://host:8080/apis/ccompat/v7).
 *   SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO  `user:password` for HTTP basic auth, if the registry asks.
 *   SCHEMA_REGISTRY_STARTUP_TIMEOUT_MS    how long start-up keeps retrying a registry that does not
 *                                         answer before the service exits with an error (30 s).
 */
import { z } from 'zod';
import { ConfigError, durationMsBetween, httpUrl, secret } from '../config.ts';
import type { Logger } from '@subx/ports';

export const schemaRegistryEnv = {
  SCHEMA_REGISTRY_URL: httpUrl
    .refine((value) => !new URL(value).username && !new URL(value).password, {
      error: 'must not hold credentials (set SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO)',
    })
    .optional(),
  SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO: secret(
    z.string().regex(/^[^:]+:.+$/s, { error: 'must be user:password' }),
  ).optional(),
  SCHEMA_REGISTRY_STARTUP_TIMEOUT_MS: durationMsBetween(1_000, 3_600_000).default(30_000),
};

export type SchemaRegistryEnvConfig = {
  [K in keyof typeof schemaRegistryEnv]?: z.output<(typeof schemaRegistryEnv)[K]>;
};

/** Structurally @subx/ports's SchemaRegistryOptions (service-kit does not depend on ports). */
export interface SchemaRegistrySettings {
  url: string;
  basicAuthUserInfo?: string;
  timeoutMs: number;
}

/** undefined without SCHEMA_REGISTRY_URL; a ConfigError for credentials with no registry to send them to. */
export function schemaRegistryFromConfig(
  config: SchemaRegistryEnvConfig,
): SchemaRegistrySettings | undefined {
  if (!config.SCHEMA_REGISTRY_URL) {
    if (config.SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO)
      throw new ConfigError([
        { key: 'SCHEMA_REGISTRY_URL', message: 'is required with SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO' },
      ]);
    return undefined;
  }
  return {
    url: config.SCHEMA_REGISTRY_URL,
    ...(config.SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO
      ? { basicAuthUserInfo: config.SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO }
      : {}),
    timeoutMs: config.SCHEMA_REGISTRY_STARTUP_TIMEOUT_MS ?? 30_000,
  };
}

/**
 * A registry that refused our schemas or did not answer within SCHEMA_REGISTRY_STARTUP_TIMEOUT_MS:
 * the service does not start (a producer whose events lack their schema ids would break the
 * consumers that rely on them), and the line names what to check.
 */
export class SchemaRegistryStartupError extends Error {
  constructor(cause: unknown) {
    super(
      `${cause instanceof Error ? cause.message : String(cause)} ` +
        '(check SCHEMA_REGISTRY_URL and SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO; SCHEMA_REGISTRY_STARTUP_TIMEOUT_MS bounds the retries)',
      { cause },
    );
    this.name = 'SchemaRegistryStartupError';
  }
}

/**
 * @subx/ports' `registerTopicSchemas`, bound by the caller to the event descriptors and its topics
 * (service-kit does not depend on ports): topic → the header bytes of its value schema id.
 */
export type RegisterTopicSchemas = (
  options: SchemaRegistrySettings & { logger: Logger },
) => Promise<ReadonlyMap<string, Buffer>>;

/**
 * The start-up step of every service that produces events: with a registry configured and a Kafka
 * bus, registers the topics' schemas and fills `valueSchemaIds`, the map the Kafka bus reads each
 * topic's schema id header from. Nothing to do without a registry or on the in-process bus (its
 * events never leave the process). A registry that refuses or does not answer in time stops the
 * start with a SchemaRegistryStartupError.
 */
export async function registerSchemasAtStartup(options: {
  registry: SchemaRegistrySettings | undefined;
  bus: string;
  logger: Logger;
  register: RegisterTopicSchemas;
  valueSchemaIds: Map<string, Buffer>;
}): Promise<void> {
  const { registry, logger } = options;
  if (!registry || options.bus !== 'kafka') return;
  const ids = await options.register({ ...registry, logger }).catch((err: unknown) => {
    throw new SchemaRegistryStartupError(err);
  });
  for (const [topic, id] of ids) options.valueSchemaIds.set(topic, id);
}

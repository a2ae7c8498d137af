/**
 * Kafka TLS and SASL from the environment, for every service with KAFKA_BROKERS (gateway,
 * extractor, billing, and `npm start` with a broker): each service's config schema spreads
 * `kafkaSecurityEnv`, and `kafkaSecurityFromConfig(config)` builds @subx/ports's `KafkaSecurity`.
 *
 *   KAFKA_SSL                 true: TLS to the brokers (verified; the system's CAs by default).
 *   KAFKA_SSL_CA_FILE         PEM of the CA that signed the brokers' certificates (implies TLS).
 *   KAFKA_SSL_CERT_FILE, KAFKA_SSL_KEY_FILE   a client certificate, where the cluster asks for one.
 *   KAFKA_SASL_MECHANISM      plain, scram-sha-256 or scram-sha-512 (case-insensitive).
 *   KAFKA_SASL_USERNAME, KAFKA_SASL_PASSWORD  the SASL credentials (both required with a mechanism).
 *
 * SASL PLAIN sends the password as it is: use it over TLS (KAFKA_SSL), as managed clusters require.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { boolEnv, ConfigError, secret } from '../config.ts';
import type { ConfigIssue } from '../config.ts';

const file = z.string().trim().min(1);

export const kafkaSecurityEnv = {
  KAFKA_SSL: boolEnv.default(false),
  KAFKA_SSL_CA_FILE: file.optional(),
  KAFKA_SSL_CERT_FILE: file.optional(),
  KAFKA_SSL_KEY_FILE: file.optional(),
  KAFKA_SASL_MECHANISM: z
    .string()
    .trim()
    .toLowerCase()
    .pipe(
      z.enum(['plain', 'scram-sha-256', 'scram-sha-512'], {
        error: 'must be plain, scram-sha-256 or scram-sha-512',
      }),
    )
    .optional(),
  KAFKA_SASL_USERNAME: z.string().trim().min(1).optional(),
  KAFKA_SASL_PASSWORD: secret(z.string().min(1)).optional(),
};

export type KafkaSecurityEnvConfig = {
  [K in keyof typeof kafkaSecurityEnv]?: z.output<(typeof kafkaSecurityEnv)[K]>;
};

/** Structurally @subx/ports's KafkaSecurity (service-kit does not depend on ports). */
export interface KafkaSecurityOptions {
  tls?: true | { ca?: string; cert?: string; key?: string };
  sasl?: { mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'; username: string; password: string };
}

function readPem(variable: string, path: string | undefined, issues: ConfigIssue[]): string | undefined {
  if (path === undefined) return undefined;
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    issues.push({
      key: variable,
      message: `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    });
    return undefined;
  }
}

/** undefined for a plaintext, unauthenticated cluster; one ConfigError naming every bad variable. */
export function kafkaSecurityFromConfig(config: KafkaSecurityEnvConfig): KafkaSecurityOptions | undefined {
  const issues: ConfigIssue[] = [];
  const ca = readPem('KAFKA_SSL_CA_FILE', config.KAFKA_SSL_CA_FILE, issues);
  const cert = readPem('KAFKA_SSL_CERT_FILE', config.KAFKA_SSL_CERT_FILE, issues);
  const key = readPem('KAFKA_SSL_KEY_FILE', config.KAFKA_SSL_KEY_FILE, issues);
  if (Boolean(config.KAFKA_SSL_CERT_FILE) !== Boolean(config.KAFKA_SSL_KEY_FILE)) {
    issues.push({
      key: config.KAFKA_SSL_CERT_FILE ? 'KAFKA_SSL_KEY_FILE' : 'KAFKA_SSL_CERT_FILE',
      message: 'is required with the other one (a certificate and its key go together)',
    });
  }
  const mechanism = config.KAFKA_SASL_MECHANISM;
  if (mechanism) {
    if (!config.KAFKA_SASL_USERNAME)
      issues.push({ key: 'KAFKA_SASL_USERNAME', message: `is required with KAFKA_SASL_MECHANISM` });
    if (!config.KAFKA_SASL_PASSWORD)
      issues.push({ key: 'KAFKA_SASL_PASSWORD', message: `is required with KAFKA_SASL_MECHANISM` });
  } else if (config.KAFKA_SASL_USERNAME || config.KAFKA_SASL_PASSWORD) {
    issues.push({
      key: 'KAFKA_SASL_MECHANISM',
      message: 'is required with KAFKA_SASL_USERNAME/PASSWORD (plain, scram-sha-256 or scram-sha-512)',
    });
  }
  if (issues.length > 0) throw new ConfigError(issues);

  const tlsOn = Boolean(config.KAFKA_SSL) || ca !== undefined || cert !== undefined;
  const security: KafkaSecurityOptions = {};
  if (tlsOn) {
    security.tls =
      ca === undefined && cert === undefined
        ? true
        : { ...(ca ? { ca } : {}), ...(cert && key ? { cert, key } : {}) };
  }
  if (mechanism) {
    security.sasl = {
      mechanism,
      username: config.KAFKA_SASL_USERNAME!,
      password: config.KAFKA_SASL_PASSWORD!,
    };
  }
  return security.tls || security.sasl ? security : undefined;
}

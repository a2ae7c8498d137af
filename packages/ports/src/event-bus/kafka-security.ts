/**
 * TLS and SASL of the Kafka client, as managed Kafka (Confluent Cloud, MSK, Aiven, Redpanda
 * Cloud, ...) needs: TLS to the brokers (with a private CA, and a client certificate where the
 * cluster asks for one) and SASL PLAIN or SCRAM-SHA-256/512. Built here and spread into kafkajs's
 * `new Kafka({...})` by kafka.ts; service-kit's `kafkaSecurityFromConfig` reads the KAFKA_SSL* and
 * KAFKA_SASL_* variables into this shape.
 */
import type { KafkaConfig, SASLOptions } from 'kafkajs';

export type KafkaSaslMechanism = 'plain' | 'scram-sha-256' | 'scram-sha-512';

export interface KafkaSecurity {
  /** TLS to the brokers. `true`: verified against the system's CAs. */
  tls?: true | { ca?: string; cert?: string; key?: string; servername?: string };
  sasl?: { mechanism: KafkaSaslMechanism; username: string; password: string };
}

/** kafkajs's `ssl` and `sasl` options; nothing for a plaintext, unauthenticated cluster. */
export function kafkaSecurityConfig(security: KafkaSecurity | undefined): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  const out: Pick<KafkaConfig, 'ssl' | 'sasl'> = {};
  if (security?.tls === true) out.ssl = true;
  else if (security?.tls) {
    const { ca, cert, key, servername } = security.tls;
    out.ssl = {
      // Never switched off: a broker that cannot prove who it is gets no credentials.
      rejectUnauthorized: true,
      ...(ca ? { ca: [ca] } : {}),
      ...(cert && key ? { cert, key } : {}),
      ...(servername ? { servername } : {}),
    };
  }
  if (security?.sasl) {
    const { mechanism, username, password } = security.sasl;
    out.sasl = { mechanism, username, password } as SASLOptions;
  }
  return out;
}

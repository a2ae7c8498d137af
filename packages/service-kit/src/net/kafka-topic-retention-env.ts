/**
 * How long the Kafka topics a service creates keep their messages, for every service with
 * KAFKA_BROKERS (gateway, extractor, billing, jobs, and `npm start` with a broker): each service's
 * config schema spreads `kafkaTopicRetentionEnv` beside `kafkaSecurityEnv`, and its main.ts passes
 * the value to @subx/ports's `createAdapters` as `kafkaTopicRetentionMs`.
 *
 *   KAFKA_TOPIC_RETENTION_MS  `retention.ms` of the topics (and their `.dlq` twins) a service creates
 *                             when they are missing; default 604800000 (7 days). Topics that exist
 *                             already keep theirs.
 *
 * Every subx topic carries account ids, so this bounds how long a deleted workspace's ids stay on
 * the brokers (docs/events.md, "Retention"). scripts/kafka-topics.sh, which creates the topics by
 * hand, reads the same variable with a shell default of the same number;
 * test/deploy/compose-file.test.ts fails when the two differ.
 */
import { z } from 'zod';

const HOUR_MS = 60 * 60 * 1000;

/** 7 days: what the topics keep unless KAFKA_TOPIC_RETENTION_MS says otherwise. */
export const DEFAULT_KAFKA_TOPIC_RETENTION_MS = 7 * 24 * HOUR_MS;

/**
 * At least an hour: a value meant in seconds or days (`604800`, `7`) would otherwise have the
 * brokers delete events before their consumers read them (usage events among them).
 */
const MIN_KAFKA_TOPIC_RETENTION_MS = HOUR_MS;

const retentionError = `must be a whole number of milliseconds, at least ${MIN_KAFKA_TOPIC_RETENTION_MS} (1 hour); ${DEFAULT_KAFKA_TOPIC_RETENTION_MS} is 7 days`;

export const kafkaTopicRetentionEnv = {
  KAFKA_TOPIC_RETENTION_MS: z
    .string()
    .trim()
    // At most 15 digits (over 30,000 years): the number stays exact, whatever was typed.
    .regex(/^\d{1,15}$/, { error: retentionError })
    .transform(Number)
    .pipe(z.number().int().min(MIN_KAFKA_TOPIC_RETENTION_MS, { error: retentionError }))
    .default(DEFAULT_KAFKA_TOPIC_RETENTION_MS),
};

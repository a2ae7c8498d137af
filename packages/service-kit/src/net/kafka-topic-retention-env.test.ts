import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, loadConfig } from '../config.ts';
import { DEFAULT_KAFKA_TOPIC_RETENTION_MS, kafkaTopicRetentionEnv } from './kafka-topic-retention-env.ts';

const schema = z.object(kafkaTopicRetentionEnv);
const load = (env: Record<string, string>) => loadConfig(schema, env).KAFKA_TOPIC_RETENTION_MS;

function configErrorOf(env: Record<string, string>): ConfigError {
  try {
    load(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error(`loaded ${JSON.stringify(env)}`);
}

describe('KAFKA_TOPIC_RETENTION_MS', () => {
  it('is 7 days unless set (an empty value counts as unset)', () => {
    expect(DEFAULT_KAFKA_TOPIC_RETENTION_MS).toBe(604_800_000);
    expect(load({})).toBe(604_800_000);
    expect(load({ KAFKA_TOPIC_RETENTION_MS: '' })).toBe(604_800_000);
  });

  it('reads a whole number of milliseconds from an hour up', () => {
    expect(load({ KAFKA_TOPIC_RETENTION_MS: '86400000' })).toBe(86_400_000);
    expect(load({ KAFKA_TOPIC_RETENTION_MS: ' 3600000 ' })).toBe(3_600_000);
    expect(load({ KAFKA_TOPIC_RETENTION_MS: '2592000000' })).toBe(2_592_000_000);
  });

  it.each(['0', '-1', '7', '604800', '3599999', '7d', '1.5e9', 'forever', '9007199254740993'])(
    'refuses %s with a message naming the variable, the unit and the floor',
    (value) => {
      const error = configErrorOf({ KAFKA_TOPIC_RETENTION_MS: value });
      expect(error.issues).toEqual([
        {
          key: 'KAFKA_TOPIC_RETENTION_MS',
          message: 'must be a whole number of milliseconds, at least 3600000 (1 hour); 604800000 is 7 days',
        },
      ]);
      expect(error.message).toContain('KAFKA_TOPIC_RETENTION_MS');
    },
  );
});

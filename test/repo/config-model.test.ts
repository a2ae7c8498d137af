/**
 * One configuration model: every service reads LOG_LEVEL, SHUTDOWN_TIMEOUT_MS,
 * STARTUP_DEPENDENCY_TIMEOUT_MS and METRICS_PORT
 * with the same service-kit helpers, the bus's topic and group names come from @subx/contracts and
 * are read under the same variable on the producing and on the consuming side, and every variable
 * a schema reads is documented in its README's configuration table.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { CONSUMER_GROUPS, TOPICS } from '@subx/contracts';
import {
  kafkaSecurityEnv,
  kafkaTopicRetentionEnv,
  logLevel,
  shutdownTimeoutMs,
  startupDependencyTimeoutMs,
} from '@subx/service-kit';
import { ConfigSchema as aiSchema } from '../../services/ai/src/config.ts';
import { ConfigSchema as billingSchema } from '../../services/billing/src/config.ts';
import { ConfigSchema as commentsSchema } from '../../services/comments/src/config.ts';
import { ConfigSchema as dashboardSchema } from '../../services/dashboard/src/config.ts';
import { ConfigSchema as extractorSchema } from '../../services/extractor/src/config.ts';
import { ConfigSchema as gatewaySchema } from '../../services/gateway/src/config.ts';
import { accessEnvSchema } from '../../services/gateway/src/access/config.ts';
import { ConfigSchema as jobsSchema } from '../../services/jobs/src/config.ts';
import { YouTubeEnvSchema } from '../../packages/youtube/src/config.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(`${root}${path}`, 'utf8');
const keysOf = (...schemas: z.ZodType[]) =>
  schemas.flatMap((schema) => Object.keys((schema as z.ZodObject).shape));

const accessSchema = accessEnvSchema({ embedded: false });

/** Each service: the schemas it reads its environment with, and where they are documented. */
const SERVICES = {
  gateway: {
    schemas: [gatewaySchema, accessSchema],
    docs: ['services/gateway/README.md', 'services/gateway/src/access/README.md'],
  },
  extractor: {
    schemas: [extractorSchema, YouTubeEnvSchema],
    docs: ['services/extractor/README.md', 'packages/youtube/README.md'],
  },
  comments: {
    schemas: [commentsSchema, YouTubeEnvSchema],
    docs: ['services/comments/README.md', 'packages/youtube/README.md'],
  },
  jobs: { schemas: [jobsSchema], docs: ['services/jobs/README.md'] },
  ai: { schemas: [aiSchema], docs: ['services/ai/README.md'] },
  billing: { schemas: [billingSchema], docs: ['services/billing/README.md'] },
  dashboard: { schemas: [dashboardSchema], docs: ['services/dashboard/README.md'] },
} as const;

describe('one configuration model', () => {
  it.each(Object.entries(SERVICES))(
    '%s reads LOG_LEVEL, SHUTDOWN_TIMEOUT_MS, STARTUP_DEPENDENCY_TIMEOUT_MS and METRICS_PORT alike',
    (_, s) => {
      const shape = (s.schemas[0] as z.ZodObject).shape as Record<string, z.ZodType>;
      // The very same schema objects, not look-alikes: one parser for every service.
      expect(shape.LOG_LEVEL).toBe(logLevel);
      expect(shape.SHUTDOWN_TIMEOUT_MS).toBe(shutdownTimeoutMs);
      expect(shape.STARTUP_DEPENDENCY_TIMEOUT_MS).toBe(startupDependencyTimeoutMs);
      expect(shape.METRICS_PORT?.safeParse('off').data).toBeNull();
      expect(shape.METRICS_PORT?.safeParse('9000').data).toBe(9000);
    },
  );

  it.each(Object.entries(SERVICES))('%s: every variable it reads is in its README', (_, s) => {
    const docs = s.docs.map(read).join('\n');
    const missing = keysOf(...s.schemas).filter((key) => !new RegExp(`\\b${key}\\b`).test(docs));
    expect(missing).toEqual([]);
  });

  it.each(Object.entries(SERVICES))(
    '%s: every variable of its own schema is in its .env.example',
    (name, s) => {
      const example = read(`services/${name}/.env.example`);
      const own = keysOf(...s.schemas.filter((schema) => schema !== YouTubeEnvSchema));
      expect(own.filter((key) => !new RegExp(`\\b${key}\\b`).test(example))).toEqual([]);
    },
  );

  it('every service with KAFKA_BROKERS reads its Kafka TLS, SASL and topic retention alike', () => {
    const kafkaServices = Object.entries(SERVICES).filter(([, s]) =>
      keysOf(s.schemas[0]).includes('KAFKA_BROKERS'),
    );
    expect(kafkaServices.map(([name]) => name).sort()).toEqual(['billing', 'extractor', 'gateway', 'jobs']);
    for (const [name, s] of kafkaServices) {
      const shape = (s.schemas[0] as z.ZodObject).shape as Record<string, z.ZodType>;
      expect(shape.KAFKA_SSL, name).toBe(kafkaSecurityEnv.KAFKA_SSL);
      expect(shape.KAFKA_TOPIC_RETENTION_MS, name).toBe(kafkaTopicRetentionEnv.KAFKA_TOPIC_RETENTION_MS);
    }
  });

  // Both sides of each topic and group read one variable, so renaming is one value set twice.
  const SIDES: { name: string; env: string; sides: Record<string, z.ZodType[]> }[] = [
    {
      name: 'credit usage',
      ...TOPICS.creditUsage,
      sides: { gateway: [accessSchema], jobs: [jobsSchema], billing: [billingSchema] },
    },
    {
      name: 'request usage',
      ...TOPICS.requestUsage,
      sides: { gateway: [accessSchema], jobs: [jobsSchema], billing: [billingSchema] },
    },
    {
      name: 'extract jobs',
      ...TOPICS.extractJobs,
      sides: { gateway: [gatewaySchema], extractor: [extractorSchema] },
    },
    {
      name: 'extract results',
      ...TOPICS.extractResults,
      sides: { gateway: [gatewaySchema], jobs: [jobsSchema], extractor: [extractorSchema] },
    },
    {
      name: 'account events',
      ...TOPICS.accountEvents,
      sides: { gateway: [gatewaySchema], billing: [billingSchema] },
    },
    {
      name: 'billing account deletions group',
      ...CONSUMER_GROUPS.billingAccountDeletions,
      sides: { billing: [billingSchema] },
    },
    {
      name: 'extractor workers group',
      ...CONSUMER_GROUPS.extractWorkers,
      sides: { gateway: [gatewaySchema], extractor: [extractorSchema] },
    },
    // The producing side of these two is the job service's runner (services/jobs/src/jobs/).
    {
      name: 'extract bulk jobs',
      ...TOPICS.extractBulkJobs,
      sides: { jobs: [jobsSchema], extractor: [extractorSchema] },
    },
    {
      name: 'extractor bulk workers group',
      ...CONSUMER_GROUPS.extractBulkWorkers,
      sides: { jobs: [jobsSchema], extractor: [extractorSchema] },
    },
  ];
  it.each(SIDES)('the $name name is read from $env on every side', ({ env, sides }) => {
    for (const [side, schemas] of Object.entries(sides)) expect(keysOf(...schemas), side).toContain(env);
  });

  it('docs/events.md names every topic with its variable', () => {
    const events = read('docs/events.md');
    for (const topic of Object.values(TOPICS)) {
      expect(events).toContain(topic.default);
      expect(events).toContain(topic.env);
    }
  });
});

/**
 * The protobuf schemas of our topics, for a schema registry: the descriptors of `subx.events.v1`
 * (`gen/events.binpb`, a FileDescriptorSet that scripts/proto-gen.sh builds from proto/ beside the
 * ts-proto code) and the message each topic carries. Services register them at start-up when
 * SCHEMA_REGISTRY_URL is set (@subx/ports' `registerTopicSchemas`); the payloads stay the ts-proto
 * encoding, the same wire format the descriptors describe.
 */
import { readFileSync } from 'node:fs';
import { createFileRegistry, fromBinary, type FileRegistry } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { CLOUD_EVENT_KINDS } from './cloud-events.ts';
import type { TOPICS } from './topics.ts';

export type TopicKey = keyof typeof TOPICS;

/** One topic and the fully qualified name of the protobuf message its values carry. */
export interface TopicSchema {
  readonly topic: string;
  readonly messageType: string;
}

/** The descriptors of every event message (and of what they import), read from the generated set. */
export function eventDescriptors(): FileRegistry {
  const bytes = readFileSync(new URL('./gen/events.binpb', import.meta.url));
  return createFileRegistry(fromBinary(FileDescriptorSetSchema, bytes));
}

/** `subx.events.v1.CreditUsage` for creditUsage: the message named by the topic's `ce_dataschema`. */
export function eventMessageType(topic: TopicKey): string {
  return CLOUD_EVENT_KINDS[topic].dataschema.replace(/^proto:/, '');
}

/**
 * The topics a service produces, under the names it was configured with (CREDIT_USAGE_TOPIC, ...),
 * each with its message: what it registers.
 */
export function topicSchemas(names: Partial<Record<TopicKey, string>>): TopicSchema[] {
  return Object.entries(names)
    .filter((entry): entry is [TopicKey, string] => Boolean(entry[1]))
    .map(([key, topic]) => ({ topic, messageType: eventMessageType(key) }));
}

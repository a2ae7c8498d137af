/**
 * Schema ids in Kafka headers, as Confluent's serializers write them in header mode, so that
 * registry-aware deserializers of other teams can decode our events without our code. At start-up a
 * producing service registers each of its topics' value schema (subject `<topic>-value`,
 * TopicNameStrategy) with @confluentinc/schemaregistry's own ProtobufSerializer, fed the
 * descriptors of our messages, and keeps the `__value_schema_id` header that serializer writes for
 * the topic. The Kafka bus then adds that header to every message of the topic; payloads stay the
 * bytes they were (the serializer's payload is thrown away), so consumers that ignore the registry
 * keep working.
 *
 * The header carries the GUID form (magic byte 1, 16 bytes, message indexes) when the registry gives
 * schemas GUIDs, as Confluent's `HeaderSchemaIdSerializer` does; a registry that does not (Apicurio's
 * Confluent-compatible API) gets the numeric form (magic byte 0, 4-byte id, message indexes) in the
 * same header. The library's `DualSchemaIdDeserializer` reads both.
 */
import { create, createMutableRegistry, type FileRegistry } from '@bufbuild/protobuf';
import type { Logger } from '../logger.ts';
export type { ValueSchemaIds } from './kafka/options.ts';
import { withTimeout } from './kafka/util.ts';
import { backoffDelay } from '../backoff.ts';

/** The header Confluent's serializers write a value's schema id into (the library's constant). */
export const VALUE_SCHEMA_ID_HEADER = '__value_schema_id';
/** The key's twin: keys are plain strings here, so never written; dropped from copied headers. */
export const KEY_SCHEMA_ID_HEADER = '__key_schema_id';

export interface SchemaRegistryOptions {
  /** Base URL of the registry's Confluent-compatible API (Apicurio: `.../apis/ccompat/v7`). */
  url: string;
  /** `user:password` for HTTP basic auth (Confluent's `basic.auth.user.info`). */
  basicAuthUserInfo?: string | undefined;
  /** Bound on registering every topic at start-up, retries included. Default 30 000 ms. */
  timeoutMs?: number | undefined;
  /** Bound on one HTTP request to the registry. Default 5 000 ms. */
  requestTimeoutMs?: number | undefined;
  logger?: Logger | undefined;
}

/** One topic and the fully qualified name of the protobuf message its values carry. */
export interface TopicSchemaOf {
  readonly topic: string;
  readonly messageType: string;
}

/** The URL without user, password, query or fragment: what a log line or an error may show. */
function registryTarget(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`.replace(/\/$/, '');
  } catch {
    return 'an unparsable URL';
  }
}

/** A registry that answered with a client error (a schema it refuses, bad credentials) won't change its mind. */
function isPermanent(error: unknown): boolean {
  const status = (error as { status?: unknown }).status;
  // Two services registering the same subject at the same moment (the gateway and the job service
  // both produce the usage topics): the registry answers the slower one 409 "already exists". The
  // schema is there; asking again gets its id. A 409 for an incompatible schema stays final.
  if (status === 409 && /already exists/i.test(error instanceof Error ? error.message : '')) return false;
  return typeof status === 'number' && status >= 400 && status < 500 && status !== 408 && status !== 429;
}

function describe(error: unknown): string {
  const status = (error as { status?: unknown }).status;
  const message = error instanceof Error ? error.message : String(error);
  // Axios messages name the method and code only; never its config (which holds the Authorization header).
  return typeof status === 'number' ? `HTTP ${status}: ${message}` : message;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Registers each topic's value schema and returns the header bytes for each. Retries a registry
 * that cannot be reached or answers 5xx with a doubling backoff until `timeoutMs`, then throws one
 * error naming the registry (without credentials), the topic and the last cause; a 4xx answer
 * (incompatible schema, refused credentials) throws at once. Throws before any request for a topic
 * whose message the descriptors do not hold.
 */
export async function registerTopicSchemas(
  options: SchemaRegistryOptions,
  descriptors: FileRegistry,
  topics: readonly TopicSchemaOf[],
): Promise<Map<string, Buffer>> {
  const target = registryTarget(options.url);
  const timeoutMs = options.timeoutMs ?? 30_000;
  for (const { topic, messageType } of topics) {
    if (!descriptors.getMessage(messageType))
      throw new Error(`schema registry: no descriptor of ${messageType} (topic ${topic})`);
  }
  // Loaded only where a registry is configured: the library brings a large tree of modules.
  const [{ SchemaRegistryClient }, { ProtobufSerializer }, serde] = await Promise.all([
    import('@confluentinc/schemaregistry/dist/schemaregistry-client.js'),
    import('@confluentinc/schemaregistry/dist/serde/protobuf.js'),
    import('@confluentinc/schemaregistry/dist/serde/serde.js'),
  ]);
  const client = new SchemaRegistryClient({
    baseURLs: [options.url],
    createAxiosDefaults: { timeout: options.requestTimeoutMs ?? 5_000 },
    // Retries are ours (bounded, logged); the client's own would multiply them.
    maxRetries: 0,
    ...(options.basicAuthUserInfo
      ? { basicAuthCredentials: { credentialsSource: 'USER_INFO', userInfo: options.basicAuthUserInfo } }
      : {}),
  });
  const headerIds: typeof serde.HeaderSchemaIdSerializer = (topic, serdeType, payload, schemaId, headers) => {
    if (schemaId.guid) return serde.HeaderSchemaIdSerializer(topic, serdeType, payload, schemaId, headers);
    if (!headers) throw new serde.SerializationError('Missing Headers');
    headers[serde.VALUE_SCHEMA_ID_HEADER] = schemaId.idToBytes();
    return payload;
  };
  const serializer = new ProtobufSerializer(client, serde.SerdeType.VALUE, {
    autoRegisterSchemas: true,
    registry: createMutableRegistry(descriptors),
    schemaIdSerializer: headerIds,
  });

  const ids = new Map<string, Buffer>();
  const deadline = Date.now() + timeoutMs;
  for (const { topic, messageType } of topics) {
    for (let attempt = 1; ; attempt++) {
      const delayMs = backoffDelay({ baseMs: 250, maxMs: 5_000 }, attempt);
      const left = deadline - Date.now();
      try {
        const headers: Record<string, Buffer | string | (Buffer | string)[] | undefined> = {};
        const message = create(descriptors.getMessage(messageType)!);
        await withTimeout(
          serializer.serialize(topic, message, headers),
          Math.max(1, left),
          `registering ${topic}-value`,
        );
        const id = headers[VALUE_SCHEMA_ID_HEADER];
        if (!Buffer.isBuffer(id)) throw new Error(`the serializer wrote no ${VALUE_SCHEMA_ID_HEADER} header`);
        ids.set(topic, id);
        options.logger?.info(
          { registry: target, subject: `${topic}-value`, messageType },
          'schema registered',
        );
        break;
      } catch (error) {
        const last = Date.now() + delayMs >= deadline || isPermanent(error);
        if (last) {
          // No `cause`: an HTTP client's error holds its request's headers (Authorization included),
          // and a logger serialises causes.
          // eslint-disable-next-line preserve-caught-error -- the message carries what the cause says
          throw new Error(
            `schema registry ${target}: ${topic}-value (${messageType}) not registered after ` +
              `${attempt} attempt${attempt === 1 ? '' : 's'}: ${describe(error)}`,
          );
        }
        options.logger?.warn(
          { registry: target, subject: `${topic}-value`, attempt, error: describe(error) },
          'schema registry not answering yet; retrying',
        );
        await sleep(delayMs);
      }
    }
  }
  return ids;
}

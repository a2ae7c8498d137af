/**
 * docs/asyncapi.yaml is a valid AsyncAPI 3 document (@asyncapi/parser, no error diagnostics) and
 * says what the code does: a channel for every topic of TOPICS (address = the topic's name), the
 * protobuf message and CloudEvents attributes of CLOUD_EVENT_KINDS, a .proto file that defines that
 * message, a producer and a consumer per topic.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Parser } from '@asyncapi/parser';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { CLOUD_EVENT_KINDS, TOPICS } from '@subx/contracts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const source = readFileSync(`${root}docs/asyncapi.yaml`, 'utf8');

describe('docs/asyncapi.yaml', () => {
  it('parses as a valid AsyncAPI 3 document', async () => {
    const { document, diagnostics } = await new Parser().parse(source, {
      source: `${root}docs/asyncapi.yaml`,
    });
    const errors = diagnostics.filter((d) => d.severity === 0);
    expect(errors.map((d) => `${d.path.join('.')}: ${d.message}`)).toEqual([]);
    expect(document?.version()).toMatch(/^3\./);
    expect(document?.channels().length).toBe(Object.keys(TOPICS).length);
  });

  it('has a channel for every topic the code defines, with its message, producer and consumer', () => {
    const doc = parseYaml(source) as {
      channels: Record<string, { address: string; messages: Record<string, { $ref: string }> }>;
      operations: Record<string, { action: string; channel: { $ref: string } }>;
      components: {
        messages: Record<string, { contentType: string; 'x-protobuf': { message: string; file: string } }>;
        schemas: Record<string, { properties: Record<string, { const?: string }> }>;
      };
    };
    for (const [name, topic] of Object.entries(TOPICS)) {
      const kind = CLOUD_EVENT_KINDS[name as keyof typeof TOPICS];
      const channels = Object.entries(doc.channels).filter(([, c]) => c.address === topic.default);
      expect(channels, `channel for ${topic.default}`).toHaveLength(1);
      const [channelId, channel] = channels[0]!;
      const refs = Object.values(channel.messages).map((m) => m.$ref.replace('#/components/messages/', ''));
      expect(refs).toHaveLength(1);
      const message = doc.components.messages[refs[0]!]!;
      expect(message.contentType).toBe('application/protobuf');
      expect(`proto:${message['x-protobuf'].message}`).toBe(kind.dataschema);
      const messageName = message['x-protobuf'].message.split('.').at(-1)!;
      expect(readFileSync(`${root}${message['x-protobuf'].file}`, 'utf8')).toMatch(
        new RegExp(`^message ${messageName} \\{`, 'm'),
      );
      const headers = doc.components.schemas[`CloudEventHeaders${refs[0]}`]!.properties;
      expect(headers.ce_type?.const).toBe(kind.type);
      expect(headers.ce_source?.const).toBe(kind.source);
      expect(headers.ce_dataschema?.const).toBe(kind.dataschema);
      const actions = Object.values(doc.operations)
        .filter((o) => o.channel.$ref === `#/channels/${channelId}`)
        .map((o) => o.action)
        .sort();
      expect(actions, `producer and consumer of ${topic.default}`).toEqual(['receive', 'send']);
    }
  });
});

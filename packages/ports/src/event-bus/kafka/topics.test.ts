import {
  KafkaJSConnectionError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
  KafkaJSSASLAuthenticationError,
} from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { brokerNotReadyYet } from './topics.ts';

// kafkajs's typings omit the constructor's message argument
const SaslError = KafkaJSSASLAuthenticationError as unknown as new (message: string) => Error;
// ... and that a protocol error is built from the broker's error code entry
const ProtocolError = KafkaJSProtocolError as unknown as new (entry: {
  type: string;
  code: number;
  retriable: boolean;
  message: string;
}) => Error;

const connection = (code: string) =>
  Object.assign(new KafkaJSConnectionError(`Connection error: ${code}`), { code });

describe('which topic-setup failures are worth waiting out', () => {
  it('a broker still starting: refused, not resolvable yet, mid election, kafkajs missing metadata', () => {
    expect(brokerNotReadyYet(connection('ECONNREFUSED'))).toBe(true);
    expect(brokerNotReadyYet(connection('ENOTFOUND'))).toBe(true);
    expect(brokerNotReadyYet(connection('EAI_AGAIN'))).toBe(true);
    expect(
      brokerNotReadyYet(
        new Error(
          'There is no leader for this topic-partition as we are in the middle of a leadership election',
        ),
      ),
    ).toBe(true);
    expect(brokerNotReadyYet(new TypeError("Cannot destructure property 'topicMetadata' of null"))).toBe(
      true,
    );
    // createTopics' waitForLeaders asking for the new topics' metadata before the broker has them
    expect(
      brokerNotReadyYet(
        new ProtocolError({
          type: 'UNKNOWN_TOPIC_OR_PARTITION',
          code: 3,
          retriable: true,
          message: 'This server does not host this topic-partition',
        }),
      ),
    ).toBe(true);
    // kafkajs's own retries ran out: the first error is its cause
    expect(
      brokerNotReadyYet(
        new KafkaJSNumberOfRetriesExceeded(connection('ECONNREFUSED'), { retryCount: 5, retryTime: 2_000 }),
      ),
    ).toBe(true);
  });

  it('settings waiting will not fix fail at once: a certificate, a password, a closed TLS handshake', () => {
    expect(brokerNotReadyYet(connection('SELF_SIGNED_CERT_IN_CHAIN'))).toBe(false);
    expect(brokerNotReadyYet(connection('UNABLE_TO_VERIFY_LEAF_SIGNATURE'))).toBe(false);
    expect(brokerNotReadyYet(new SaslError('SASL PLAIN authentication failed'))).toBe(false);
    expect(
      brokerNotReadyYet(
        new KafkaJSNumberOfRetriesExceeded(new Error('Closed connection'), {
          retryCount: 5,
          retryTime: 2_000,
        }),
      ),
    ).toBe(false);
    expect(brokerNotReadyYet('not an error')).toBe(false);
  });
});

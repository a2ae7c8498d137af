import { describe, expect, it } from 'vitest';
import { CONSUMER_GROUPS, TOPICS } from '@subx/contracts';
import { loadBillingConfig } from './config.ts';

describe('billing config', () => {
  it('refuses a bad value with one line naming the variable and what it expected', () => {
    expect(() => loadBillingConfig({ CREDIT_USAGE_TOPIC: '   ' })).toThrow(
      /^Invalid configuration: CREDIT_USAGE_TOPIC: must not be blank$/,
    );
    expect(() => loadBillingConfig({ SHUTDOWN_TIMEOUT_MS: 'later' })).toThrow(
      /^Invalid configuration: SHUTDOWN_TIMEOUT_MS: must be a positive duration/,
    );
  });

  it('names its topics and group by @subx/contracts, renamed by the variables the gateway reads too', () => {
    expect(loadBillingConfig({})).toMatchObject({
      CREDIT_USAGE_TOPIC: TOPICS.creditUsage.default,
      REQUEST_USAGE_TOPIC: TOPICS.requestUsage.default,
      KAFKA_GROUP_ID: CONSUMER_GROUPS.billingLedger.default,
      ACCOUNT_EVENTS_TOPIC: TOPICS.accountEvents.default,
      KAFKA_ACCOUNT_DELETIONS_GROUP_ID: CONSUMER_GROUPS.billingAccountDeletions.default,
    });
    expect(
      loadBillingConfig({
        [TOPICS.creditUsage.env]: 'acme.credits',
        [TOPICS.requestUsage.env]: 'acme.requests',
      }),
    ).toMatchObject({ CREDIT_USAGE_TOPIC: 'acme.credits', REQUEST_USAGE_TOPIC: 'acme.requests' });
  });
});

/** Without SMTP the mails (and their one-time links) go to the log only by choice. */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@subx/service-kit';
import { loadDashboardConfig } from './config.ts';

const base = { ADMIN_TOKEN: 'config-test-admin-token-0123456789' };

describe('mail to the log', () => {
  it('refuses to start under NODE_ENV=production without SMTP_URL, with a clear message', () => {
    let error: unknown;
    try {
      loadDashboardConfig({ ...base, NODE_ENV: 'production' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues).toEqual([
      expect.objectContaining({ key: 'SMTP_URL', message: expect.stringContaining('MAIL_TO_LOG=true') }),
    ]);
    expect(() => loadDashboardConfig({ ...base, MAIL_TO_LOG: 'false' })).toThrow(/SMTP_URL/);
  });

  it('starts in production with SMTP_URL, or with an explicit MAIL_TO_LOG=true; outside production as before', () => {
    expect(
      loadDashboardConfig({ ...base, NODE_ENV: 'production', SMTP_URL: 'smtp://mail.internal:587' }).SMTP_URL,
    ).toBe('smtp://mail.internal:587');
    expect(loadDashboardConfig({ ...base, NODE_ENV: 'production', MAIL_TO_LOG: 'true' }).MAIL_TO_LOG).toBe(
      true,
    );
    expect(loadDashboardConfig({ ...base }).SMTP_URL).toBeUndefined();
    expect(() => loadDashboardConfig({ ...base, MAIL_TO_LOG: 'maybe' })).toThrow(/MAIL_TO_LOG/);
  });
});

describe('read like every service', () => {
  it('serves /metrics on METRICS_PORT (9469 alone, off to disable)', () => {
    expect(loadDashboardConfig(base).METRICS_PORT).toBe(9469);
    expect(loadDashboardConfig({ ...base, METRICS_PORT: 'off' }).METRICS_PORT).toBeNull();
    expect(() => loadDashboardConfig({ ...base, METRICS_PORT: '99999' })).toThrow(
      /^Invalid configuration: METRICS_PORT: must be a port number \(0-65535\) or "off"$/,
    );
  });

  it('refuses a bad value with one line naming the variable and what it expected', () => {
    expect(loadDashboardConfig({ ...base, SHUTDOWN_TIMEOUT_MS: '5s' }).SHUTDOWN_TIMEOUT_MS).toBe(5_000);
    expect(() => loadDashboardConfig({ ...base, GATEWAY_ADMIN_URL: 'gateway:8081' })).toThrow(
      /^Invalid configuration: GATEWAY_ADMIN_URL: must be an http\(s\) URL$/,
    );
  });
});

describe('password hashing cost', () => {
  it('is scrypt N = 2^15 by default, and the environment may raise it but not lower it below 2^14', () => {
    expect(loadDashboardConfig(base).PASSWORD_SCRYPT_N).toBe(32_768);
    expect(loadDashboardConfig({ ...base, PASSWORD_SCRYPT_N: '65536' }).PASSWORD_SCRYPT_N).toBe(65_536);
    expect(() => loadDashboardConfig({ ...base, PASSWORD_SCRYPT_N: '8192' })).toThrow(/PASSWORD_SCRYPT_N/);
    expect(() => loadDashboardConfig({ ...base, PASSWORD_SCRYPT_N: '20000' })).toThrow(/PASSWORD_SCRYPT_N/);
  });
});

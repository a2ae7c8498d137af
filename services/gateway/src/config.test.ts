import { describe, expect, it } from 'vitest';
import { loadConfig, redactConfig } from './config.ts';

describe('gateway config', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      PORT: 8080,
      HOST: '0.0.0.0',
      BODY_LIMIT_BYTES: 65_536,
      BATCH_TIMEOUT_MS: 60_000,
      PLAYLIST_TIMEOUT_MS: 120_000,
      FANOUT_MIN_ITEM_TIMEOUT_MS: 10_000,
      TRUST_PROXY: false,
      ADMIN_PORT: 8081,
      ADMIN_HOST: '127.0.0.1',
    });
    expect(config.KAFKA_BROKERS).toBeUndefined();
  });

  it('parses numbers, booleans and lists from strings', () => {
    const config = loadConfig({ PORT: '9000', TRUST_PROXY: '10.0.0.0/8', KAFKA_BROKERS: 'a:9092, b:9092' });
    expect(config).toMatchObject({
      PORT: 9000,
      TRUST_PROXY: ['10.0.0.0/8'],
      KAFKA_BROKERS: ['a:9092', 'b:9092'],
    });
    expect(loadConfig({ TRUST_PROXY: '1' }).TRUST_PROXY).toBeTypeOf('function');
  });

  it('refuses TRUST_PROXY=true: every client could choose its address for the per-IP limit', () => {
    expect(() => loadConfig({ TRUST_PROXY: 'true' })).toThrow(/TRUST_PROXY[\s\S]*hop count/);
  });

  it('reports every bad key at once, without secret values', () => {
    expect(() => loadConfig({ PORT: 'eighty', BODY_LIMIT_BYTES: '-1', TRUST_PROXY: 'yes' })).toThrow(
      /PORT[\s\S]*BODY_LIMIT_BYTES[\s\S]*TRUST_PROXY/,
    );
  });

  it('redacts secrets for the startup log', () => {
    const redacted = redactConfig(
      loadConfig({ REDIS_URL: 'redis://:pw@host:6379', MONGO_URL: 'mongodb://u:p@h' }),
    );
    expect(redacted.REDIS_URL).toBe('[redacted]');
    expect(redacted.MONGO_URL).toBe('[redacted]');
    expect(JSON.stringify(redacted)).not.toContain('pw@');
  });

  it('reads durations, addresses and names with the helpers every service uses', () => {
    expect(
      loadConfig({ SHUTDOWN_TIMEOUT_MS: '10s', GRPC_DEADLINE_MS: '45s', LOG_LEVEL: 'debug' }),
    ).toMatchObject({
      SHUTDOWN_TIMEOUT_MS: 10_000,
      GRPC_DEADLINE_MS: 45_000,
      LOG_LEVEL: 'debug',
    });
    expect(() => loadConfig({ SHUTDOWN_TIMEOUT_MS: 'soon' })).toThrow(
      /^Invalid configuration: SHUTDOWN_TIMEOUT_MS: must be a positive duration in ms, or with a unit/,
    );
    expect(() => loadConfig({ EXTRACTOR_GRPC_ADDR: 'extractor' })).toThrow(
      /EXTRACTOR_GRPC_ADDR: must be a host:port/,
    );
    expect(() => loadConfig({ REDIS_URL: 'localhost' })).toThrow(/REDIS_URL: must be an absolute URL/);
    expect(() => loadConfig({ EXTRACT_JOBS_TOPIC: ' ' })).toThrow(/EXTRACT_JOBS_TOPIC: must not be blank/);
  });
});

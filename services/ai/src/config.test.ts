import { describe, expect, it } from 'vitest';
import { ConfigError } from '@subx/service-kit';
import { loadAiConfig } from './config.ts';

describe('ai config', () => {
  it('refuses a bad value with one line naming the variable and what it expected', () => {
    expect(() => loadAiConfig({ AI_TIMEOUT_MS: 'a minute' })).toThrow(
      new ConfigError([
        {
          key: 'AI_TIMEOUT_MS',
          message: 'must be a positive duration in ms, or with a unit: 500ms, 10s, 2m, 1h, 7d',
        },
      ]),
    );
    expect(() => loadAiConfig({ EXTRACTOR_GRPC_ADDR: 'extractor' })).toThrow(
      /^Invalid configuration: EXTRACTOR_GRPC_ADDR: must be a host:port address$/,
    );
    expect(() => loadAiConfig({ OPENAI_BASE_URL: 'ftp://models' })).toThrow(
      /OPENAI_BASE_URL: must be an http\(s\) URL/,
    );
  });

  it('reads SHUTDOWN_TIMEOUT_MS and LOG_LEVEL like every service', () => {
    expect(loadAiConfig({ SHUTDOWN_TIMEOUT_MS: '20s', LOG_LEVEL: 'warn' })).toMatchObject({
      SHUTDOWN_TIMEOUT_MS: 20_000,
      LOG_LEVEL: 'warn',
    });
    expect(() => loadAiConfig({ LOG_LEVEL: 'verbose' })).toThrow(/LOG_LEVEL: must be one of fatal, error/);
  });
});

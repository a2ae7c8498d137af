import type { AiConfig } from './config.ts';
import type { AiEngine } from './model/engine.ts';
import { createLocalEngine } from './model/local-engine.ts';
import { createModelEngine } from './model/model-engine.ts';
import type { ModelEvent } from './model/model-engine.ts';

/** The model engine when an API key is configured, else the offline engine (docs/decisions.md "Run-time contract"). */
export function createEngineFromConfig(
  config: Pick<
    AiConfig,
    'OPENAI_API_KEY' | 'OPENAI_BASE_URL' | 'AI_MODEL' | 'AI_TIMEOUT_MS' | 'AI_MAX_RETRIES' | 'AI_CHUNK_TOKENS'
  >,
  onEvent?: (event: ModelEvent) => void,
): AiEngine {
  if (!config.OPENAI_API_KEY) return createLocalEngine();
  return createModelEngine({
    baseUrl: config.OPENAI_BASE_URL,
    apiKey: config.OPENAI_API_KEY,
    model: config.AI_MODEL,
    timeoutMs: config.AI_TIMEOUT_MS,
    maxRetries: config.AI_MAX_RETRIES,
    chunkTokens: config.AI_CHUNK_TOKENS,
    ...(onEvent ? { onEvent } : {}),
  });
}

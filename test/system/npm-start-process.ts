/**
 * The real `npm start` launcher (scripts/start-embedded.ts) as a child process on embedded adapters,
 * for black-box system tests: started through `spawnLauncher`, its banner read (URL, pro API key and
 * account, metrics URL), and stopped with SIGTERM.
 */
import { spawnLauncher } from '@subx/testing/launcher';

export interface NpmStartProcess {
  base: string;
  apiKey: string;
  accountId: string;
  /** The banner's metrics URL (absent with METRICS_PORT=off). */
  metricsUrl: string | undefined;
  /** Everything the process printed so far. */
  output(): string;
  /** SIGTERM, and resolves when the process has exited. */
  stop(): Promise<void>;
}

/** `env` is added to the defaults: free ports, errors-only logs, every engine embedded, no model key. */
export async function startNpmStart(
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<NpmStartProcess> {
  const launcher = spawnLauncher([], {
    PORT: '0',
    METRICS_PORT: '0',
    LOG_LEVEL: 'error',
    REDIS_URL: '',
    KAFKA_BROKERS: '',
    MONGO_URL: '',
    OPENAI_API_KEY: '',
    ...env,
  });
  try {
    const banner = await launcher.waitFor(
      /subx is running at (http:\/\/\S+)[\s\S]*pro API key:\s+(sxk_v1_[A-Za-z0-9]{32})\s+\(account (\S+)\)/,
      timeoutMs,
    );
    const metricsUrl = /metrics:\s+(http:\/\/\S+\/metrics)/.exec(launcher.output())?.[1];
    return {
      base: banner[1]!,
      apiKey: banner[2]!,
      accountId: banner[3]!,
      metricsUrl,
      output: launcher.output,
      stop: launcher.stop,
    };
  } catch (err) {
    await launcher.stop();
    throw err;
  }
}

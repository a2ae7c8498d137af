/**
 * The real `npm start` launcher (scripts/start-embedded.ts) as a child process on embedded adapters,
 * for black-box system tests: started, its banner read (URL, pro API key and account, metrics URL),
 * and stopped with SIGTERM.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

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
  let output = '';
  const child = spawn(
    process.execPath,
    ['--disable-warning=ExperimentalWarning', 'scripts/start-embedded.ts'],
    {
      cwd: root,
      env: {
        ...process.env,
        PORT: '0',
        METRICS_PORT: '0',
        LOG_LEVEL: 'error',
        REDIS_URL: '',
        KAFKA_BROKERS: '',
        MONGO_URL: '',
        OPENAI_API_KEY: '',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };

  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const base = /subx is running at (http:\/\/\S+)/.exec(output)?.[1];
    const key = /pro API key:\s+(sxk_v1_[A-Za-z0-9]{32})\s+\(account (\S+)\)/.exec(output);
    if (base && key) {
      const metricsUrl = /metrics:\s+(http:\/\/\S+\/metrics)/.exec(output)?.[1];
      return { base, apiKey: key[1]!, accountId: key[2]!, metricsUrl, output: () => output, stop };
    }
    if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stop();
  throw new Error(`npm start did not come up within ${timeoutMs} ms:\n${output}`);
}

/**
 * The real `npm start` launcher (scripts/start-embedded.ts) as a child process on embedded adapters,
 * for black-box system tests: started through `spawnLauncher`, its banner read (URL, pro API key and
 * account, metrics URL), and stopped with SIGTERM.
 */
import type { ChildProcess } from 'node:child_process';
import { EMBEDDED_ENV, spawnLauncher } from '@subx/embedded/launcher';

export interface NpmStartProcess {
  base: string;
  apiKey: string;
  accountId: string;
  /** The banner's `admin API: <url>`: the admin listener (ADMIN_PORT), never the public port. */
  adminUrl: string;
  /** The banner's metrics URL (absent with METRICS_PORT=off). */
  metricsUrl: string | undefined;
  child: ChildProcess;
  /** Everything the process printed so far. */
  output(): string;
  /** SIGTERM, and resolves when the process has exited. */
  stop(): Promise<void>;
}

/** `env` is added to the defaults: free ports, errors-only logs, every engine embedded, no model key. */
export async function startNpmStart(
  env: Record<string, string>,
  timeoutMs = 60_000,
  options: { killAfterMs?: number } = {},
): Promise<NpmStartProcess> {
  const launcher = spawnLauncher([], { ...EMBEDDED_ENV, LOG_LEVEL: 'error', ...env }, options);
  try {
    const banner = await launcher.waitFor(
      /subx is running at (http:\/\/\S+)[\s\S]*pro API key:\s+(sxk_v1_[A-Za-z0-9]{32})\s+\(account (\S+)\)/,
      timeoutMs,
    );
    const metricsUrl = /metrics:\s+(http:\/\/\S+\/metrics)/.exec(launcher.output())?.[1];
    const adminUrl = /admin API: (http:\/\/\S+)/.exec(launcher.output())?.[1];
    if (!adminUrl) throw new Error(`the banner names no admin API:\n${launcher.output()}`);
    return {
      base: banner[1]!,
      apiKey: banner[2]!,
      accountId: banner[3]!,
      adminUrl,
      metricsUrl,
      child: launcher.child,
      output: launcher.output,
      stop: launcher.stop,
    };
  } catch (err) {
    await launcher.stop();
    throw err;
  }
}

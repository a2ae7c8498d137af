/**
 * `subx-admin`: the first API key after an install, from inside the gateway's container (compose:
 * `docker compose exec gateway subx-admin create-account --tier pro`; Kubernetes: `kubectl exec
 * deploy/<release>-gateway -- subx-admin create-account --tier pro`). It calls the gateway's own
 * admin listener with the container's ADMIN_TOKEN, so it needs no other access and goes through the
 * same checks, store and audit as the admin API. The key is printed once, on stdout alone (for
 * `KEY=$(subx-admin create-account …)`); everything else goes to stderr.
 *
 * Environment: ADMIN_TOKEN (required); SUBX_ADMIN_URL, default http://127.0.0.1:$ADMIN_PORT (8081).
 */
import { parseArgs } from 'node:util';

const USAGE = `usage:
  subx-admin create-account [--tier free|pro|business|enterprise] [--credits N] [--email ADDRESS]
      creates an account and prints its API key (once) on stdout; the account id goes to stderr
  subx-admin regenerate-key --account ACCOUNT_ID
      replaces the account's key and prints the new one on stdout
environment: ADMIN_TOKEN (required), SUBX_ADMIN_URL (default http://127.0.0.1:$ADMIN_PORT, port 8081)`;

/** Bounded: an admin listener that does not answer is reported, not waited for. */
const TIMEOUT_MS = 15_000;

class UsageError extends Error {}

interface Io {
  env: Record<string, string | undefined>;
  out(line: string): void;
  err(line: string): void;
  fetch?: typeof fetch;
}

async function call(io: Io, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const token = io.env.ADMIN_TOKEN;
  if (!token)
    throw new UsageError('ADMIN_TOKEN is not set (run this inside the gateway container, or export it)');
  const base = io.env.SUBX_ADMIN_URL ?? `http://127.0.0.1:${io.env.ADMIN_PORT ?? '8081'}`;
  const url = new URL(path, base.endsWith('/') ? base : `${base}/`);
  let res: Response;
  try {
    res = await (io.fetch ?? fetch)(url, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    const inner = (err as { cause?: { code?: string; message?: string } }).cause;
    const cause = inner?.code ?? inner?.message ?? (err as Error).message;
    throw new Error(`the gateway's admin listener at ${url.origin} did not answer (${cause})`, {
      cause: err,
    });
  }
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    // not JSON: reported below with the status
  }
  if (!res.ok) {
    const error = json.error as { code?: string; message?: string } | undefined;
    throw new Error(`${res.status} ${error?.code ?? ''} ${error?.message ?? text.slice(0, 200)}`.trim());
  }
  return json;
}

/** Runs one command; the exit code (0 done, 1 failed, 2 bad usage). */
export async function runAdminCli(argv: string[], io: Io): Promise<number> {
  try {
    const [command, ...rest] = argv;
    if (command === 'create-account') {
      const { values } = parseArgs({
        args: rest,
        options: {
          tier: { type: 'string', default: 'pro' },
          credits: { type: 'string' },
          email: { type: 'string' },
        },
        strict: true,
      });
      const credits = values.credits === undefined ? undefined : Number(values.credits);
      if (credits !== undefined && (!Number.isInteger(credits) || credits < 0))
        throw new UsageError('--credits must be a whole number of credits, 0 or more');
      const created = await call(io, 'POST', 'admin/v1/accounts', {
        tier: values.tier,
        ...(credits === undefined ? {} : { credits }),
        ...(values.email ? { email: values.email } : {}),
      });
      io.err(
        `account ${String(created.account_id)} (${String(created.tier)}, ${String(created.credits)} credits); its key, shown once:`,
      );
      io.out(String(created.api_key));
      return 0;
    }
    if (command === 'regenerate-key') {
      const { values } = parseArgs({ args: rest, options: { account: { type: 'string' } }, strict: true });
      if (!values.account) throw new UsageError('--account ACCOUNT_ID is required');
      const regenerated = await call(
        io,
        'POST',
        `admin/v1/accounts/${encodeURIComponent(values.account)}/api-key`,
      );
      io.err(`account ${values.account}: new key, shown once (the old one stopped working):`);
      io.out(String(regenerated.api_key));
      return 0;
    }
    throw new UsageError(command === undefined || command === '--help' ? '' : `unknown command '${command}'`);
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      const message = (err as Error).message;
      if (message) io.err(`subx-admin: ${message}`);
      io.err(USAGE);
      return 2;
    }
    io.err(`subx-admin: ${(err as Error).message}`);
    return 1;
  }
}

if (import.meta.main) {
  process.exitCode = await runAdminCli(process.argv.slice(2), {
    env: process.env,
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  });
}

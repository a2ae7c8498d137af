/**
 * No span attribute and no log line carries a one-time token or an API key,
 * though real requests put them in URLs (the dashboard's mailed `/reset?token=…` and
 * `/verify?token=…` links, a key pasted into a gateway URL). The services run in a child process
 * exactly as deployed (`node --import` telemetry preload, HTTP auto-instrumentation), spans going to
 * OpenTelemetry's InMemorySpanExporter behind the real bootstrap.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));

interface Output {
  statuses: Record<string, number>;
  spans: {
    name: string;
    scope: string;
    kind: number;
    attributes: Record<string, unknown>;
    events: { name: string; attributes: Record<string, unknown> }[];
  }[];
  logs: string[];
}

function run(token: string, apiKey: string): Promise<Output> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [
        '--disable-warning=ExperimentalWarning',
        '--import',
        './memory-exporter-telemetry.ts',
        './url-secrets-app.ts',
        token,
        apiKey,
      ],
      {
        cwd: fixtures,
        timeout: 60_000,
        maxBuffer: 32 * 1024 * 1024,
        env: { PATH: process.env.PATH ?? '', OTEL_EXPORTER_OTLP_ENDPOINT: '' },
      },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`the traced services failed: ${err.message}\n${stderr}`));
        else resolve(JSON.parse(stdout) as Output);
      },
    );
  });
}

describe('one-time tokens and API keys in URLs', () => {
  it('reach no span attribute, span event or log line', async () => {
    const token = randomBytes(32).toString('base64url');
    const apiKey = `sxk_v1_${randomBytes(24).toString('hex').slice(0, 32)}`;
    const out = await run(token, apiKey);

    // The requests really ran and were traced: one HTTP server span per request, each with its URL.
    expect(Object.keys(out.statuses)).toHaveLength(9);
    const servers = out.spans.filter(
      (s) => s.scope === '@opentelemetry/instrumentation-http' && s.kind === 1,
    );
    const clients = out.spans.filter(
      (s) => s.scope === '@opentelemetry/instrumentation-http' && s.kind === 2,
    );
    expect(servers).toHaveLength(9);
    expect(clients).toHaveLength(9);
    const reset = servers.find((s) => s.attributes['url.path'] === '/reset');
    expect(reset?.attributes['url.query']).toBe('token=[redacted]');
    const verify = servers.find((s) => String(s.attributes['url.query']).startsWith('lang=en'));
    // Harmless parameters stay readable; only the secret's value goes.
    expect(verify?.attributes['url.query']).toBe('lang=en&token=[redacted]&x=1');
    const pasted = servers.find((s) => String(s.attributes['url.query']).includes('api_key='));
    expect(pasted?.attributes['url.query']).toBe(
      'url=https%3A%2F%2Fyoutu.be%2FdQw4w9WgXcQ&api_key=[redacted]',
    );
    // Outgoing requests keep their origin only: a path or query can itself be a credential.
    for (const client of clients) {
      expect(String(client.attributes['url.full'])).toMatch(/^http:\/\/[^/]+\/\[redacted\]$/);
      expect(client.attributes['url.query'] ?? '').toBe('');
    }

    const everything = JSON.stringify(out.spans) + out.logs.join('\n');
    expect(everything).not.toContain(token);
    expect(everything).not.toContain(apiKey);
    expect(everything).not.toContain(apiKey.slice('sxk_v1_'.length));
    expect(everything).not.toContain(encodeURIComponent(apiKey));
  });
});

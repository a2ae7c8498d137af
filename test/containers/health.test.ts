/**
 * Every container of the stack is healthy by the HEALTHCHECK of its own image (the subx images:
 * deploy/docker/healthcheck.ts), every Prometheus target is up with the alert rules loaded, and a
 * trace started at the gateway reaches the collector.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { compose, containersOf, docker, eventually, GATEWAY, health, PROMETHEUS } from './stack.ts';

const SUBX = ['gateway', 'extractor', 'comments', 'ai', 'billing', 'jobs', 'dashboard'];

describe('container health', () => {
  it.each(SUBX)('%s: healthy by the image HEALTHCHECK (deploy/docker/healthcheck.ts)', async (service) => {
    const [id] = await containersOf(service);
    expect(id, `${service} is not running`).toBeDefined();
    const image = (await docker(['inspect', '-f', '{{.Config.Image}}', id!])).trim();
    const imageCheck = (
      await docker(['image', 'inspect', '-f', '{{json .Config.Healthcheck.Test}}', image])
    ).trim();
    expect(imageCheck).toContain('/app/deploy/docker/healthcheck.ts');
    expect(await health(id!)).toBe('healthy');
  });

  it.each(['redis', 'mongo', 'kafka', 'demo-youtube'])(
    '%s: healthy by its compose healthcheck',
    async (service) => {
      const [id] = await containersOf(service);
      expect(id).toBeDefined();
      expect(await health(id!)).toBe('healthy');
    },
  );
});

describe('Prometheus', () => {
  it('scrapes every service and every target is up', async () => {
    const targets = await eventually(
      'every target up',
      async () => {
        const body = (await (await fetch(`${PROMETHEUS}/api/v1/targets`)).json()) as {
          data: { activeTargets: { labels: { instance: string }; health: string; lastError: string }[] };
        };
        const active = body.data.activeTargets;
        return active.length > 0 && active.every((t) => t.health === 'up') ? active : undefined;
      },
      120_000,
      3_000,
    );
    // Every service, the dashboard included (METRICS_PORT like the others).
    expect(targets.map((t) => t.labels.instance).sort()).toEqual(
      [...SUBX.map((s) => `${s}:9464`), 'localhost:9090'].sort(),
    );
  });

  it('has the chart alert rules loaded', async () => {
    const body = (await (await fetch(`${PROMETHEUS}/api/v1/rules`)).json()) as {
      data: { groups: { name: string; rules: { type: string }[] }[] };
    };
    const alerts = body.data.groups.flatMap((g) => g.rules).filter((r) => r.type === 'alerting');
    expect(alerts.length).toBeGreaterThan(0);
  });
});

describe('tracing', () => {
  it('a trace started at the gateway reaches the collector', async () => {
    const traceId = randomBytes(16).toString('hex');
    const response = await fetch(`${GATEWAY}/api/v1/validate?url=https://youtu.be/it3OtbTxQk0`, {
      headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
    });
    expect(response.status).toBe(200);
    // debug exporter, verbosity normal: one line per span with its trace id, under its resource.
    // The trace goes on in the extractor (propagated over gRPC), whose batch may be logged first:
    // wait for a gateway resource block that holds a span of this trace.
    const gatewayBlock = await eventually(
      `a span of trace ${traceId} under service.name=gateway in the collector's log`,
      async () => {
        const { stdout, stderr } = await compose(['logs', '--no-log-prefix', 'otel-collector']);
        return (stdout + stderr)
          .split('ResourceTraces')
          .find((block) => block.includes('service.name=gateway') && block.includes(traceId));
      },
      60_000,
      2_000,
    );
    expect(gatewayBlock).toContain(traceId);
  });
});

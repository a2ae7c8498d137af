import type { FastifyInstance, FastifyReply } from 'fastify';
import { BACKEND_NAMES } from '@subx/backends';
import type { BackendName } from '@subx/backends';
import type { RouteContext } from '../http/route-context.ts';

type ServiceStatus = 'ok' | 'down';

interface HealthBody {
  status: 'ok' | 'degraded' | 'down';
  version: string;
  api_version: 'v1';
  services: Record<'gateway' | BackendName, ServiceStatus>;
  /** The video platform as the extractor sees it: `unreachable` while its requests get no answer. */
  platform: 'ok' | 'unreachable';
}

/**
 * /health and /api/v1/health (docs/decisions.md "Outputs"): every backend's gRPC health check, in parallel.
 * `down` (503) when the extractor is unreachable, since no subtitle operation can work then;
 * `degraded` when another service is, or when the extractor reaches the video platform no more
 * (`platform: "unreachable"`: DNS, refused, reset, TLS or timeouts; the cause is in the extractor's
 * log and `subx_upstream_network_errors_total`). Still 200: restarting us does not fix the network.
 *
 * Probes and load balancers poll these, so (docs/api.md "Health"): they answer HEAD as well as GET, are never
 * rate limited (a probe that sees 429 takes a healthy instance out), and answer 200 or 503, never
 * 500: a dependency check that throws, even synchronously, counts as that dependency down, and a
 * failure of the route itself is reported as the gateway down. Concurrent requests share one round
 * of checks, so an unlimited endpoint cannot multiply the gRPC health traffic.
 */
export function registerHealth(app: FastifyInstance, ctx: RouteContext, version: string): void {
  const { backends, config } = ctx.deps;

  async function check(name: BackendName): Promise<ServiceStatus> {
    try {
      return (await backends[name].checkHealth(config.HEALTH_CHECK_TIMEOUT_MS)) ? 'ok' : 'down';
    } catch {
      return 'down';
    }
  }

  async function health(): Promise<HealthBody> {
    const results = await Promise.all(
      BACKEND_NAMES.map(async (name): Promise<[BackendName, ServiceStatus]> => [name, await check(name)]),
    );
    const services = { gateway: 'ok', ...Object.fromEntries(results) } as HealthBody['services'];
    let platform: HealthBody['platform'] = 'ok';
    if (services.extractor === 'ok') {
      const reachable = await backends.extractor
        .checkPlatform(config.HEALTH_CHECK_TIMEOUT_MS)
        .catch(() => true);
      if (!reachable) platform = 'unreachable';
    }
    const status =
      services.extractor === 'down'
        ? 'down'
        : results.some(([, s]) => s === 'down') || platform === 'unreachable'
          ? 'degraded'
          : 'ok';
    return { status, version, api_version: 'v1', services, platform };
  }

  let running: Promise<HealthBody> | null = null;
  async function sharedHealth(): Promise<HealthBody> {
    running ??= health().finally(() => {
      running = null;
    });
    return running;
  }

  async function answer(reply: FastifyReply, withBody: boolean) {
    let body: HealthBody;
    try {
      body = await sharedHealth();
    } catch (err) {
      reply.log.error({ err }, 'health check failed');
      const down = Object.fromEntries(BACKEND_NAMES.map((name) => [name, 'down']));
      body = {
        status: 'down',
        version,
        api_version: 'v1',
        services: { ...down, gateway: 'down' } as HealthBody['services'],
        platform: 'ok',
      };
    }
    reply.code(body.status === 'down' ? 503 : 200).header('cache-control', 'no-store');
    if (!withBody) return reply.type('application/json; charset=utf-8').send();
    return reply.send(body);
  }

  for (const path of ['/health', '/api/v1/health']) {
    app.get(path, async (_request, reply) => answer(reply, true));
    app.head(path, async (_request, reply) => answer(reply, false));
  }

  // Probes for the orchestrator: not rate limited, no downstream calls on liveness.
  const live = async () => ({ status: 'ok' });
  app.get('/health/live', live);
  app.head('/health/live', async (_request, reply) => reply.type('application/json; charset=utf-8').send());
  const ready = async (withBody: boolean, reply: FastifyReply) => {
    const ok = ctx.deps.readiness ? await ctx.deps.readiness().catch(() => false) : true;
    reply.code(ok ? 200 : 503);
    return withBody ? reply.send({ status: ok ? 'ready' : 'not_ready' }) : reply.send();
  };
  app.get('/health/ready', async (_request, reply) => ready(true, reply));
  app.head('/health/ready', async (_request, reply) => ready(false, reply));
}

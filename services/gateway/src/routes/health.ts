import type { FastifyInstance } from 'fastify';
import { BACKEND_NAMES } from '../backends/types.ts';
import type { BackendName } from '../backends/types.ts';
import { ipLimitHook } from '../http/access-hooks.ts';
import type { RouteContext } from './v1/context.ts';

export type ServiceStatus = 'ok' | 'down';

/**
 * /health and /api/v1/health (decisions.md): every backend's gRPC health check, in parallel.
 * `down` (503) when the extractor is unreachable, since no subtitle operation can work then;
 * `degraded` when another service is.
 */
export function registerHealth(app: FastifyInstance, ctx: RouteContext, version: string): void {
  const { backends, config, ipLimiter } = ctx.deps;

  async function health() {
    const results = await Promise.all(
      BACKEND_NAMES.map(async (name): Promise<[BackendName, ServiceStatus]> => {
        const ok = await backends[name].checkHealth(config.HEALTH_CHECK_TIMEOUT_MS).catch(() => false);
        return [name, ok ? 'ok' : 'down'];
      }),
    );
    const services = { gateway: 'ok' as ServiceStatus, ...Object.fromEntries(results) } as Record<
      'gateway' | BackendName,
      ServiceStatus
    >;
    const status =
      services.extractor === 'down' ? 'down' : results.some(([, s]) => s === 'down') ? 'degraded' : 'ok';
    return { status, version, api_version: 'v1', services };
  }

  for (const path of ['/health', '/api/v1/health']) {
    app.get(path, { onRequest: [ipLimitHook(ipLimiter)] }, async (_request, reply) => {
      const body = await health();
      return reply.code(body.status === 'down' ? 503 : 200).send(body);
    });
  }

  // Probes for the orchestrator: not rate limited, no downstream calls on liveness.
  app.get('/health/live', async () => ({ status: 'ok' }));
  app.get('/health/ready', async (_request, reply) => {
    const ready = ctx.deps.readiness ? await ctx.deps.readiness().catch(() => false) : true;
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready' });
  });
}

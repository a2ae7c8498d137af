/**
 * Probes: live = the process answers; ready = both stores answer within 2 s and we are not closing
 * (fastify answers 503 itself while closing). The gateway is not part of readiness: a gateway
 * outage shows as a 502 page, and restarting dashboards would not fix it.
 */
import type { FastifyInstance } from 'fastify';
import { withTimeout } from '@subx/service-kit';
import type { DashboardServices } from '../services.ts';

const PROBE_TIMEOUT_MS = 2_000;

export default async function healthRoutes(app: FastifyInstance, s: DashboardServices) {
  app.get('/health/live', { config: { permission: 'public' } }, async () => ({ status: 'ok' }));
  app.get('/health/ready', { config: { permission: 'public' } }, async (_request, reply) => {
    const ping = (p: () => Promise<void>) =>
      withTimeout(
        () =>
          p().then(
            () => true,
            () => false,
          ),
        PROBE_TIMEOUT_MS,
        () => false,
      );
    const [kvOk, storeOk] = await Promise.all([ping(() => s.kv.ping()), ping(() => s.store.ping())]);
    const ok = kvOk && storeOk;
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'down', kv: kvOk, store: storeOk });
  });
}

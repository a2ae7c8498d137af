/**
 * `request.gateway`: the gateway's admin API client for this request, which sends the request's id
 * as X-Request-Id on every call, so the dashboard's and the gateway's log lines of one click
 * share an id.
 */
import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import type { GatewayClient } from '../gateway/client.ts';

declare module 'fastify' {
  interface FastifyRequest {
    gateway: GatewayClient;
  }
}

export default fp(
  async (app, options: { gateway: GatewayClient }) => {
    app.decorateRequest('gateway', {
      getter(this: FastifyRequest) {
        return options.gateway.forRequest(this.id);
      },
    });
  },
  { name: 'gateway' },
);

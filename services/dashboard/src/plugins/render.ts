/**
 * Rendering: `reply.page(render, status)` sends a server-rendered page with this visitor's CSRF
 * token, who is signed in (for the navigation) and the current path; `reply.retryAfter(ms)` sets
 * Retry-After on throttled answers. Unknown paths and errors get a page too (a gateway outage
 * shows as 502 "The API is not answering").
 */
import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../gateway/client.ts';
import type { PageContext } from '../views/pages.ts';
import { messagePage } from '../views/pages.ts';
import { noWorkspacePage } from '../views/members-page.ts';
import type { DashboardServices } from '../services.ts';

type Render = (ctx: PageContext) => string;

declare module 'fastify' {
  interface FastifyReply {
    page(render: Render, status?: number): Promise<FastifyReply>;
    /** Sets Retry-After; returns the whole seconds to show. */
    retryAfter(waitMs: number): number;
  }
}

export default fp(
  async (app, s: DashboardServices) => {
    app.decorateReply('page', async function (this: FastifyReply, render: Render, status = 200) {
      const request = this.request;
      const user = request.dash.user;
      const ctx: PageContext = {
        csrf: this.csrfToken(),
        viewer: user
          ? {
              email: user.email,
              verified: user.email_verified,
              operator: s.operators.isOperator(user),
              role: request.dash.workspace?.role ?? null,
            }
          : null,
        path: request.url.split('?')[0]!,
      };
      return this.code(status).type('text/html; charset=utf-8').send(render(ctx));
    });

    app.decorateReply('retryAfter', function (this: FastifyReply, waitMs: number) {
      const seconds = Math.max(1, Math.ceil(waitMs / 1000));
      void this.header('retry-after', String(seconds));
      return seconds;
    });

    /**
     * A gateway 404 for the person's own workspace: it was deleted (by a member of it, or an
     * operator). Everyone in it is left without one, its invitations go, and the page says so
     * instead of failing.
     */
    async function workspaceGone(error: unknown, request: FastifyRequest): Promise<boolean> {
      const accountId = request.dash.user?.account_id;
      if (!(error instanceof GatewayError) || error.status !== 404 || !accountId) return false;
      const gone = await request.gateway.getAccount(accountId).then(
        () => false,
        (err: unknown) => err instanceof GatewayError && err.status === 404,
      );
      if (!gone) return false;
      await s.users.detachAccount(accountId);
      await s.invitations.forgetWorkspace(accountId);
      request.dash.user = (await s.users.byId(request.dash.user!._id)) ?? request.dash.user;
      return true;
    }

    app.setErrorHandler(async (error: unknown, request, reply) => {
      if (await workspaceGone(error, request).catch(() => false)) {
        return reply.page((ctx) => noWorkspacePage(ctx), 403);
      }
      const gatewayDown =
        error instanceof GatewayError || (error as { name?: string }).name === 'TimeoutError';
      const status = (error as { statusCode?: number }).statusCode;
      if (!gatewayDown && typeof status === 'number' && status >= 400 && status < 500) {
        return reply.page(
          (ctx) => messagePage(ctx, 'Bad request', 'The request could not be read.', 'error'),
          status,
        );
      }
      request.log.error({ err: error, path: request.url.split('?')[0] }, 'dashboard request failed');
      return reply.page(
        (ctx) =>
          messagePage(
            ctx,
            gatewayDown ? 'The API is not answering' : 'Something went wrong',
            gatewayDown
              ? 'The subx API could not be reached. Try again in a moment.'
              : 'An unexpected error happened. Try again.',
            'error',
          ),
        gatewayDown ? 502 : 500,
      );
    });

    app.setNotFoundHandler(async (_request, reply) =>
      reply.page((ctx) => messagePage(ctx, 'Not found', 'There is no page here.', 'error'), 404),
    );
  },
  { name: 'render', dependencies: ['session', 'csrf'] },
);

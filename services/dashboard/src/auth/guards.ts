/**
 * Route-level guards, attached as a route's `preHandler` (after the CSRF check):
 * - `signedIn`: anonymous visitors are sent to /sign-in;
 * - `confirmed(refuse)`: a signed-in person whose address is not confirmed gets `refuse` instead
 *   of the route (no key, no usage before confirmation);
 * - `operator`: the operator role (which needs a confirmed address) and the password entered
 *   within OPERATOR_REAUTH_MS, else 403 or the step-up page /reauth.
 * Handlers behind a guard read the person with `signedInUser(request)`.
 */
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { DashboardConfig } from '../config.ts';
import type { OperatorPolicy } from './operators.ts';
import type { UserDoc } from './users.ts';

/** Only paths of the operator area may be the target after re-authentication (no open redirect). */
export const safeNext = (value: string) =>
  /^\/operators(?:\?page=\d{1,6})?$/.test(value) ? value : '/operators';

/** The signed-in person of a request that passed a guard. */
export function signedInUser(request: FastifyRequest): UserDoc {
  const user = request.dash.user;
  if (!user) throw new Error('signedInUser() on a route without a signed-in guard');
  return user;
}

export interface Guards {
  signedIn: preHandlerAsyncHookHandler;
  confirmed(refuse: Refusal): preHandlerAsyncHookHandler[];
  operator: preHandlerAsyncHookHandler[];
}

/** How a route answers a request the guard refuses. */
export type Refusal = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;

// What the guards read, named by their own modules (services.ts builds the guards: importing its
// DashboardServices here would be an import circle). The page for a signed-in person who is not
// an operator is the caller's: the guards decide, the views render.
export function createGuards(s: {
  operators: Pick<OperatorPolicy, 'isOperator'>;
  config: Pick<DashboardConfig, 'OPERATOR_REAUTH_MS'>;
  now: () => number;
  notAnOperator: Refusal;
}): Guards {
  const signedIn: preHandlerAsyncHookHandler = async (request, reply) => {
    if (!request.dash.user) return reply.redirect('/sign-in', 303);
  };
  const operatorOnly: preHandlerAsyncHookHandler = async (request, reply) => {
    if (!s.operators.isOperator(signedInUser(request))) return s.notAnOperator(request, reply);
    // Step-up: the password must have been entered recently (sign-in counts).
    if (s.now() - request.dash.session!.authAt > s.config.OPERATOR_REAUTH_MS) {
      const next = request.method === 'GET' ? request.url : '/operators';
      return reply.redirect(`/reauth?next=${encodeURIComponent(safeNext(next))}`, 303);
    }
  };
  return {
    signedIn,
    confirmed: (refuse) => [
      signedIn,
      async (request, reply) => {
        if (!signedInUser(request).email_verified) return refuse(request, reply);
      },
    ],
    operator: [signedIn, operatorOnly],
  };
}

/**
 * The promotion API: `PUT /admin/operators/{email}` with the gateway's admin token, body
 * `{ "operator": true|false }`. Not cookie-authenticated, so no CSRF token; answers JSON. The role
 * needs a confirmed address (409 EMAIL_NOT_CONFIRMED otherwise); each change is an audit event.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { DashboardServices } from '../services.ts';
import { normalizeEmail } from '../users.ts';

export default async function adminOperatorRoutes(app: FastifyInstance, s: DashboardServices) {
  const expected = Buffer.from(s.config.ADMIN_TOKEN);

  app.put('/admin/operators/:email', async (request, reply) => {
    const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1] ?? '';
    const given = Buffer.from(token);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return reply
        .code(401)
        .header('www-authenticate', 'Bearer')
        .send({ error: { code: 'UNAUTHORIZED', message: 'The admin token is missing or invalid.' } });
    }
    const email = normalizeEmail((request.params as { email: string }).email);
    const operator = (request.body as { operator?: unknown } | undefined)?.operator;
    if (!email || typeof operator !== 'boolean') {
      return reply.code(400).send({
        error: {
          code: 'INVALID_REQUEST',
          message: 'Send an email in the path and { "operator": true|false }.',
        },
      });
    }
    const user = await s.users.byEmail(email);
    if (!user) {
      return reply
        .code(404)
        .send({ error: { code: 'NOT_FOUND', message: 'Nobody signed up with this email.' } });
    }
    if (operator && !user.email_verified) {
      return reply.code(409).send({
        error: {
          code: 'EMAIL_NOT_CONFIRMED',
          message: 'This address is not confirmed yet: the operator role needs a confirmed address.',
        },
      });
    }
    await s.users.update(user._id, { operator });
    s.audit(operator ? 'operator.granted' : 'operator.revoked', {
      actor: { admin_token: true },
      target: {
        email: user.email,
        user_id: user._id,
        ...(user.account_id ? { account_id: user.account_id } : {}),
      },
      details: { via: 'promotion API' },
    });
    return { email, operator };
  });
}

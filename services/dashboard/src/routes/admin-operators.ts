/**
 * The promotion API: `PUT /admin/operators/{email}` with the gateway's admin token, body
 * `{ "operator": true|false }`. Not cookie-authenticated, so no CSRF token; answers JSON. The role
 * needs a confirmed address (409 EMAIL_NOT_CONFIRMED otherwise); each change is an audit event.
 *
 * The token (or, while it is rotated, ADMIN_TOKEN_PREVIOUS too) is compared as SHA-256 digests
 * (equal lengths whatever was sent: no length leak), and
 * a client network gets ADMIN_TOKEN_FAILURES wrong tokens per window, then 429 until it ends.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { DashboardServices } from '../services.ts';
import { throttleNetwork } from '../auth/throttle-network.ts';
import { normalizeEmail } from '../auth/users.ts';

const ADMIN_TOKEN_FAILURES = 10;
const FAILURE_WINDOW_MS = 15 * 60_000;

const digest = (value: string) => createHash('sha256').update(value).digest();

export default async function adminOperatorRoutes(app: FastifyInstance, s: DashboardServices) {
  // While the token is rotated (ADMIN_TOKEN_PREVIOUS), both are accepted; every one is compared.
  const expected = [s.config.ADMIN_TOKEN, s.config.ADMIN_TOKEN_PREVIOUS]
    .filter((t): t is string => Boolean(t))
    .map(digest);

  app.put('/admin/operators/:email', { config: { permission: 'operator' } }, async (request, reply) => {
    const window = Math.floor(s.now() / FAILURE_WINDOW_MS);
    const failuresKey = `dashboard:admin-token-failures:${throttleNetwork(request.ip)}:${window}`;
    if (Number((await s.kv.get(failuresKey)) ?? 0) >= ADMIN_TOKEN_FAILURES) {
      const seconds = reply.retryAfter((window + 1) * FAILURE_WINDOW_MS - s.now());
      return reply.code(429).send({
        error: {
          code: 'RATE_LIMITED',
          message: `Too many wrong admin tokens from your network. Try again in ${seconds} s.`,
        },
      });
    }
    const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1] ?? '';
    const presented = digest(token);
    if (!expected.map((e) => timingSafeEqual(presented, e)).includes(true)) {
      await s.kv.incrementWithin(failuresKey, 1, ADMIN_TOKEN_FAILURES, {
        expireAtMs: (window + 1) * FAILURE_WINDOW_MS,
      });
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

/**
 * Data retention: the workspace's settings (from the gateway's admin API) in one form, saved with
 * the person named as the audit log's actor. Only the fields that changed are sent, so the log says
 * what was changed. The dashboard checks that each field is empty or a whole number; the caps are
 * the gateway's to enforce, and its refusal (400, naming the field and the cap) is said on the page.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RetentionSettings, UpdateRetentionBody } from '../gateway/client.ts';
import { GatewayError, RETENTION_FIELDS } from '../gateway/client.ts';
import { signedInUser } from '../auth/guards.ts';
import { field, formSchema } from '../views/forms.ts';
import type { Notice } from '../views/pages.ts';
import type { RetentionForm } from '../views/retention-page.ts';
import { retentionPage } from '../views/retention-page.ts';
import type { DashboardServices } from '../services.ts';

const retentionFormSchema = formSchema(...RETENTION_FIELDS);
/** Owners and admins: the role table's workspace settings. */
const SETTINGS = { permission: 'settings:manage' } as const;

/** The change the form asks for against the settings now, or what is wrong with it. */
export function retentionChange(
  body: unknown,
  current: RetentionSettings,
): { change: UpdateRetentionBody; form: RetentionForm } | { problem: string; form: RetentionForm } {
  const form = Object.fromEntries(
    RETENTION_FIELDS.map((name) => [name, field(body, name).trim()]),
  ) as RetentionForm;
  const change: UpdateRetentionBody = {};
  for (const name of RETENTION_FIELDS) {
    const typed = form[name];
    if (typed !== '' && !/^\d{1,6}$/.test(typed))
      return { problem: `${name}: a whole number of days, or empty for the default.`, form };
    const days = typed === '' ? null : Number(typed);
    if (days !== current[name]) change[name] = days;
  }
  return { change, form };
}

export default async function retentionRoutes(app: FastifyInstance, s: DashboardServices) {
  const noAccountYet = s.guards.confirmed(async (_request, reply) =>
    reply.page((ctx) => retentionPage(ctx, null)),
  );
  const show = (reply: FastifyReply, settings: RetentionSettings | null, notice?: Notice) =>
    reply.page((ctx) => retentionPage(ctx, settings, notice));

  app.get('/retention', { config: SETTINGS, preHandler: noAccountYet }, async (request, reply) => {
    const accountId = signedInUser(request).account_id;
    if (!accountId) return show(reply, null);
    return show(reply, await request.gateway.retention(accountId));
  });

  app.post(
    '/retention',
    { config: SETTINGS, schema: { body: retentionFormSchema }, preHandler: noAccountYet },
    async (request: FastifyRequest, reply) => {
      const user = signedInUser(request);
      if (!user.account_id) return reply.redirect('/retention', 303);
      const current = await request.gateway.retention(user.account_id);
      const asked = retentionChange(request.body, current);
      if ('problem' in asked) {
        return reply.page(
          (ctx) => retentionPage(ctx, current, { kind: 'error', text: asked.problem }, asked.form),
          400,
        );
      }
      if (Object.keys(asked.change).length === 0)
        return show(reply, current, { kind: 'ok', text: 'Nothing changed.' });
      try {
        const saved = await request.gateway.updateRetention(user.account_id, asked.change, user._id);
        return show(reply, saved, {
          kind: 'ok',
          text: 'Saved. Anything older than a lowered setting is deleted within minutes.',
        });
      } catch (err) {
        if (!(err instanceof GatewayError) || err.status !== 400) throw err;
        const text = err.detail ?? 'The gateway refused these settings.';
        return reply.page((ctx) => retentionPage(ctx, current, { kind: 'error', text }, asked.form), 400);
      }
    },
  );
}

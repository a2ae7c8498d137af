/**
 * The named keys' forms (keys.ts handles them beside the primary key's): the make-a-key form read
 * into the admin API's body, and the two POST routes. The dashboard checks only what the form
 * itself must say (a name, a scope, a date); the rest (a network that is not a CIDR, an expiry in
 * the past or too far ahead, too many keys) is the gateway's to refuse, with its reason shown.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { CreateApiKeyBody } from '../gateway/client.ts';
import { API_KEY_SCOPES } from '../gateway/client.ts';
import { field, formSchema } from '../views/forms.ts';
import type { NamedKeyForm } from '../views/named-keys.ts';
import { scopeField } from '../views/named-keys.ts';

const DAY_MS = 86_400_000;
const createForm = formSchema('name', 'expires_on', 'allowed_networks', ...API_KEY_SCOPES.map(scopeField));
const confirmForm = formSchema('confirm');

/**
 * The expiry of a key chosen to last through `day` (`YYYY-MM-DD`): 00:00 UTC of the day after, so a
 * key made "until today" still works today. Null when `day` is not a calendar date.
 */
export function endOfDayUtc(day: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return null;
  const start = Date.parse(`${day}T00:00:00.000Z`);
  // Date.parse rolls the 31st of February over to March: only a date that reads back the same is one.
  if (!Number.isFinite(start) || new Date(start).toISOString().slice(0, 10) !== day) return null;
  return new Date(start + DAY_MS).toISOString();
}

/** The form as the admin API's body, or what is wrong with it; `form` is what was sent, to refill. */
export function namedKeyRequest(
  body: unknown,
): { body: CreateApiKeyBody; form: NamedKeyForm } | { problem: string; form: NamedKeyForm } {
  const form: NamedKeyForm = {
    name: field(body, 'name').trim(),
    scopes: API_KEY_SCOPES.filter((scope) => field(body, scopeField(scope)) === 'yes'),
    expiresOn: field(body, 'expires_on').trim(),
    networks: field(body, 'allowed_networks'),
  };
  if (!form.name) return { problem: 'Name the key: say what it is for.', form };
  if (form.scopes.length === 0) return { problem: 'Tick at least one scope.', form };
  const expiresAt = form.expiresOn ? endOfDayUtc(form.expiresOn) : null;
  if (form.expiresOn && !expiresAt) return { problem: 'The expiry is not a date (YYYY-MM-DD).', form };
  const networks = [
    ...new Set(
      form.networks
        .split(/\r?\n/)
        .map((line) => line.trim())
        .filter(Boolean),
    ),
  ];
  return {
    body: {
      name: form.name,
      scopes: [...form.scopes],
      ...(expiresAt ? { expires_at: expiresAt } : {}),
      ...(networks.length ? { allowed_cidrs: networks } : {}),
    },
    form,
  };
}

type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;

export function namedKeyRoutes(
  app: FastifyInstance,
  o: {
    preHandler: preHandlerAsyncHookHandler[];
    create: Handler;
    revoke: (request: FastifyRequest, reply: FastifyReply, keyId: string) => Promise<FastifyReply>;
  },
): void {
  app.post(
    '/keys/named',
    { config: { permission: 'keys:manage' }, schema: { body: createForm }, preHandler: o.preHandler },
    o.create,
  );
  app.post<{ Params: { key_id: string } }>(
    '/keys/named/:key_id/revoke',
    {
      config: { permission: 'keys:manage' },
      schema: {
        body: confirmForm,
        params: { type: 'object', properties: { key_id: { type: 'string', minLength: 1, maxLength: 64 } } },
      },
      preHandler: o.preHandler,
    },
    (request, reply) => o.revoke(request, reply, request.params.key_id),
  );
}

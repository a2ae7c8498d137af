/**
 * The playground: one extract or validate call on behalf of the signed-in account, through the
 * gateway's admin API (the browser never handles a key); counted and billed like a call with the
 * key. The page shows the equivalent curl with `<API_KEY>`. Its first URL is a video the platform
 * knows: under `npm run demo` one the replay has, and the page offers the others.
 */
import type { FastifyInstance } from 'fastify';
import { field, formSchema } from '../views/forms.ts';
import type { PlaygroundInput } from '../views/pages.ts';
import { FORMATS, playgroundPage } from '../views/pages.ts';
import type { DashboardServices } from '../services.ts';
import { accountOf } from './account.ts';

const playgroundForm = formSchema('operation', 'url', 'format', 'language');

export default async function playgroundRoutes(app: FastifyInstance, s: DashboardServices) {
  const { apiUrl, guards, demoVideos } = s;
  const defaultInput: PlaygroundInput = {
    operation: 'extract',
    url: s.sampleVideoUrl,
    format: 'json',
    language: '',
  };

  app.get(
    '/playground',
    { config: { permission: 'playground:use' }, preHandler: guards.signedIn },
    async (request, reply) => {
      const account = await accountOf(request);
      return reply.page((ctx) =>
        playgroundPage(ctx, {
          apiUrl,
          input: defaultInput,
          result: null,
          available: account?.key.status === 'active',
          demoVideos,
        }),
      );
    },
  );

  app.post(
    '/playground',
    {
      config: { permission: 'playground:use' },
      schema: { body: playgroundForm },
      preHandler: guards.signedIn,
    },
    async (request, reply) => {
      const body = request.body;
      const operation = field(body, 'operation') === 'validate' ? 'validate' : 'extract';
      const format = (FORMATS as readonly string[]).includes(field(body, 'format'))
        ? field(body, 'format')
        : 'json';
      const input: PlaygroundInput = {
        operation,
        url: field(body, 'url').trim().slice(0, 2048),
        format,
        language: field(body, 'language').trim().slice(0, 35),
      };
      const account = await accountOf(request);
      if (!account || account.key.status !== 'active') {
        return reply.page(
          (ctx) =>
            playgroundPage(
              ctx,
              { apiUrl, input, result: null, available: false, demoVideos },
              { kind: 'error', text: 'Generate an API key first.' },
            ),
          409,
        );
      }
      const result =
        operation === 'validate'
          ? await request.gateway.call(account.account_id, {
              path: '/api/v1/validate',
              query: { url: input.url },
              client_ip: request.ip,
            })
          : await request.gateway.call(account.account_id, {
              path: '/api/v1/extract',
              body: {
                url: input.url,
                ...(format !== 'json' ? { format } : {}),
                ...(input.language ? { language: input.language } : {}),
              },
            });
      return reply.page((ctx) => playgroundPage(ctx, { apiUrl, input, result, available: true, demoVideos }));
    },
  );
}

import Fastify from 'fastify';
import fastifyFormbody from '@fastify/formbody';
import { describe, expect, it } from 'vitest';
import { FIELD_MAX_LENGTH, field, formSchema } from './forms.ts';

async function echo() {
  const app = Fastify();
  await app.register(fastifyFormbody);
  app.post('/f', { schema: { body: formSchema('email', 'password') } }, async (request) => ({
    email: field(request.body, 'email'),
    password: field(request.body, 'password'),
  }));
  return app;
}
const post = async (payload: string) =>
  (await echo()).inject({
    method: 'POST',
    url: '/f',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload,
  });

describe('form schemas', () => {
  it('reads string fields, a missing one as empty', async () => {
    const res = await post('email=a%40b.example&_csrf=t');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ email: 'a@b.example', password: '' });
  });

  it('refuses a field sent twice or longer than the cap before the handler runs', async () => {
    expect((await post('email=a&email=b')).statusCode).toBe(400);
    expect((await post(`password=${'x'.repeat(FIELD_MAX_LENGTH + 1)}`)).statusCode).toBe(400);
    expect((await post(`password=${'x'.repeat(FIELD_MAX_LENGTH)}`)).statusCode).toBe(200);
  });
});

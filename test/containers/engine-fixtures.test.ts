/**
 * The testcontainers engine fixtures (packages/testing/src/engine-containers.ts) on this Docker
 * engine: they start the locally built engine images, and an image that is neither local nor
 * pullable gives a reason that names it and the cause (the suites then skip with the command
 * `bash scripts/containers.sh stand-ins`, or fail under CI=true).
 */
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { CONTAINERS_STAND_INS, startEngineContainer } from '@subx/testing/engine-containers';

function redisPing(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write('PING\r\n'));
    socket.setTimeout(5_000, () => socket.destroy(new Error('no answer in 5 s')));
    socket.once('data', (data) => {
      resolve(data.toString().trim());
      socket.end();
    });
    socket.once('error', reject);
  });
}

describe('testcontainers engine fixtures', () => {
  it('start redis:7 from the local image store', async () => {
    const outcome = await startEngineContainer('redis');
    expect(outcome).toMatchObject({ via: 'testcontainers redis:7' });
    expect(await redisPing(outcome.endpoint!)).toBe('+PONG');
  });

  it('name the image and the cause when it is neither local nor pullable', async () => {
    const outcome = await startEngineContainer('redis', 'subx-missing/redis:none');
    expect(outcome.endpoint).toBeNull();
    expect(outcome).toMatchObject({
      reason: expect.stringMatching(
        /image subx-missing\/redis:none is not in the local image store and cannot be pulled \(.+\)/,
      ),
    });
    expect(CONTAINERS_STAND_INS).toBe('bash scripts/containers.sh stand-ins');
  });
});

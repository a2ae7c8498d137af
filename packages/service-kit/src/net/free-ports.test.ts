import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startupProblem } from '../startup-errors.ts';
import { assertPortsFree } from './free-ports.ts';

const open: Server[] = [];
async function occupy(): Promise<number> {
  const server = createServer();
  open.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

const at = (variable: string, port: number) => ({ variable, port, host: '127.0.0.1' });

describe('assertPortsFree', () => {
  it('names every busy port and its variable in one line, in the given order', async () => {
    const [a, b, free] = [await occupy(), await occupy(), await freePort()];
    const err = await assertPortsFree([at('PORT', a), at('ADMIN_PORT', free), at('METRICS_PORT', b)]).catch(
      (e: unknown) => e,
    );
    expect(startupProblem(err)).toBe(
      `PORT ${a} and METRICS_PORT ${b} are already in use (set PORT and METRICS_PORT to other ports)`,
    );
  });

  it('reads one busy port as the single-port message', async () => {
    const a = await occupy();
    await expect(assertPortsFree([at('DASHBOARD_PORT', a)])).rejects.toThrow(
      `DASHBOARD_PORT ${a} is already in use (set DASHBOARD_PORT to another port)`,
    );
  });

  it('lists three as "a, b and c"', async () => {
    const [a, b, c] = [await occupy(), await occupy(), await occupy()];
    await expect(
      assertPortsFree([at('PORT', a), at('ADMIN_PORT', b), at('DASHBOARD_PORT', c)]),
    ).rejects.toThrow(
      `PORT ${a}, ADMIN_PORT ${b} and DASHBOARD_PORT ${c} are already in use (set PORT, ADMIN_PORT and DASHBOARD_PORT to other ports)`,
    );
  });

  it('reports two variables naming the same free port (they would collide at start)', async () => {
    const p = await freePort();
    await expect(assertPortsFree([at('PORT', p), at('DASHBOARD_PORT', p)])).rejects.toThrow(
      `DASHBOARD_PORT ${p} is already in use`,
    );
  });

  it('passes free ports and port 0, and releases what it bound', async () => {
    const p = await freePort();
    await assertPortsFree([at('PORT', p), at('METRICS_PORT', 0)]);
    // bound again right away: the check let go of it
    const again = createServer();
    open.push(again);
    await new Promise<void>((resolve, reject) => {
      again.once('error', reject);
      again.listen(p, '127.0.0.1', resolve);
    });
  });
});

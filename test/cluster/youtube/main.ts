/**
 * The recorded YouTube platform as a pod for the cluster suite (test/cluster/engines.yaml): the
 * fake of @subx/testing replaying packages/testing/fixtures-recorded, reachable on 0.0.0.0:PORT.
 * The fake itself listens on 127.0.0.1 only (it is a test fixture), so each connection is piped
 * to it; nothing here changes what it answers.
 */
import { createServer, connect } from 'node:net';
import { startFakeYouTube } from '../../../packages/testing/src/fake-youtube/index.ts';

const port = Number(process.env.PORT ?? 8080);
const fake = await startFakeYouTube();
const target = new URL(fake.url);
const server = createServer((client) => {
  const upstream = connect(Number(target.port), target.hostname);
  client.pipe(upstream).pipe(client);
  const close = (): void => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', close);
  upstream.on('error', close);
});
server.listen(port, '0.0.0.0', () => console.log(`recorded YouTube platform on 0.0.0.0:${port}`));
const stop = (): void => {
  server.close();
  void fake.close().finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

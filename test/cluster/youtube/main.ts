/**
 * The recorded YouTube platform as a pod for the cluster suite (test/cluster/engines.yaml): the
 * fake of @subx/testing replaying packages/testing/fixtures-recorded, reachable on 0.0.0.0:PORT.
 * The fake itself listens on 127.0.0.1 only (it is a test fixture), so each connection is piped
 * to it; nothing here changes what it answers.
 *
 * JOB_VIDEOS adds that many videos for the suite's bulk job (`cjob0000000`, `cjob0000001`, ...:
 * SYNTHETIC copies of the recorded F1xioXWb8CY under those ids), each /player answered
 * JOB_VIDEO_DELAY_MS late, so the job is still running when a job-service pod is deleted
 * (scripts/cluster/test.sh, check_job_service_deletion).
 */
import { createServer, connect } from 'node:net';
import {
  defaultRoutes,
  startFakeYouTube,
  videoIds,
  type FixtureRef,
  type VideoRoute,
} from '../../../packages/testing/src/fake-youtube/index.ts';

const port = Number(process.env.PORT ?? 8080);
const jobVideos = Number(process.env.JOB_VIDEOS ?? 0);
const jobVideoDelayMs = Number(process.env.JOB_VIDEO_DELAY_MS ?? 0);

/** `cjob` and the index, zero-padded to a video id's 11 characters. */
const jobVideoId = (i: number): string => `cjob${String(i).padStart(7, '0')}`;

function jobVideoRoutes(count: number): Record<string, VideoRoute> {
  const source = videoIds.manualAndAuto;
  const template = defaultRoutes().videos[source] as VideoRoute;
  const derive = (ref: FixtureRef, videoId: string): FixtureRef => ({
    derive: ref,
    fromVideoId: source,
    videoId,
  });
  const videos: Record<string, VideoRoute> = {};
  for (let i = 0; i < count; i++) {
    const id = jobVideoId(i);
    videos[id] = {
      ...template,
      player: Object.fromEntries(
        Object.entries(template.player).map(([client, ref]) => [client, derive(ref, id)]),
      ),
      ...(template.next ? { next: derive(template.next, id) } : {}),
      note: `SYNTHETIC copy of ${source} for the cluster suite's bulk job`,
    };
  }
  return videos;
}

const fake = await startFakeYouTube({ routes: { videos: jobVideoRoutes(jobVideos) } });
if (jobVideoDelayMs > 0) {
  for (let i = 0; i < jobVideos; i++) {
    fake.failNext(
      { kind: 'delay', ms: jobVideoDelayMs },
      { endpoint: 'player', videoId: jobVideoId(i), times: Number.MAX_SAFE_INTEGER },
    );
  }
}
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
server.listen(port, '0.0.0.0', () =>
  console.log(`recorded YouTube platform on 0.0.0.0:${port} (${jobVideos} job videos)`),
);
const stop = (): void => {
  server.close();
  void fake.close().finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

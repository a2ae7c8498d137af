/**
 * The subx images run the way the Helm chart runs them (deploy/helm/subx/values.yaml:
 * podSecurityContext runAsUser/runAsGroup 1000, securityContext readOnlyRootFilesystem, drop ALL
 * capabilities, no privilege escalation, an emptyDir on /tmp), and the chart's probes answer: the
 * gateway and dashboard on /health/live and /health/ready, the gRPC services on grpc.health.v1
 * Check (what the chart's native grpc probe calls). And they carry no dev dependency, test or fixture.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { containersOf, docker, eventually } from './stack.ts';

const HTTP = { gateway: 8080, dashboard: 8090 } as Record<string, number>;
const SERVICES = ['gateway', 'extractor', 'comments', 'ai', 'billing', 'jobs', 'dashboard'];
const TAG = process.env.SUBX_IMAGE_TAG ?? 'dev';
const started: string[] = [];

afterAll(async () => {
  if (started.length) await docker(['rm', '-f', ...started]).catch(() => '');
});

/** The chart's securityContext as `docker run` flags. */
const CHART_SECURITY = [
  '--user',
  '1000:1000',
  '--read-only',
  '--tmpfs',
  '/tmp:size=64m',
  '--cap-drop',
  'ALL',
  '--security-opt',
  'no-new-privileges',
];

async function runLikeTheChart(service: string): Promise<string> {
  // The running compose container gives the network and the configuration (addresses, secrets).
  const [source] = await containersOf(service);
  expect(source, `${service} of the stack is not running`).toBeDefined();
  const env = JSON.parse(await docker(['inspect', '-f', '{{json .Config.Env}}', source!])) as string[];
  const network = (
    await docker(['inspect', '-f', '{{range $k, $v := .NetworkSettings.Networks}}{{$k}}{{end}}', source!])
  ).trim();
  const id = (
    await docker([
      'run',
      '-d',
      ...CHART_SECURITY,
      '--network',
      network,
      ...env.flatMap((e) => ['-e', e]),
      // no compose healthcheck here: the probes below are the chart's
      '--no-healthcheck',
      `subx/${service}:${TAG}`,
    ])
  ).trim();
  started.push(id);
  return id;
}

const probe = (id: string, script: string) => docker(['exec', id, 'node', '-e', script]);

describe('images run as the chart runs them', () => {
  it.each(SERVICES)(
    '%s: non-root, read-only root, no capabilities, no privilege escalation; probes answer',
    async (service) => {
      const id = await runLikeTheChart(service);
      const config = JSON.parse(await docker(['inspect', '-f', '{{json .HostConfig}}', id])) as {
        ReadonlyRootfs: boolean;
        CapDrop: string[];
        SecurityOpt: string[];
      };
      expect(config.ReadonlyRootfs).toBe(true);
      expect(config.CapDrop).toEqual(['ALL']);
      expect(config.SecurityOpt).toContain('no-new-privileges');
      expect((await docker(['exec', id, 'id', '-u'])).trim()).toBe('1000');
      // Nothing can be written next to the code.
      const write = await probe(
        id,
        "try { require('node:fs').writeFileSync('/app/x', ''); console.log('wrote') } catch (e) { console.log(e.code) }",
      );
      expect(write.trim()).toBe('EROFS');
      const port = HTTP[service];
      if (port) {
        for (const path of ['/health/live', '/health/ready'])
          await eventually(
            `${service} ${path}`,
            async () => {
              const status = (
                await probe(id, `fetch('http://127.0.0.1:${port}${path}').then((r) => console.log(r.status))`)
              ).trim();
              return status === '200' ? status : undefined;
            },
            90_000,
            1_000,
          );
      } else {
        // grpc.health.v1.Health/Check on GRPC_PORT, what the chart's grpc probe calls.
        await eventually(
          `${service} gRPC health`,
          async () => {
            await docker([
              'exec',
              id,
              'node',
              '--disable-warning=ExperimentalWarning',
              '/app/deploy/docker/healthcheck.ts',
            ]);
            return true;
          },
          90_000,
          1_000,
        );
      }
    },
  );
});

describe('runtime images hold no dev dependencies, tests or fixtures', () => {
  it.each(SERVICES)('%s', async (service) => {
    const found = await docker([
      'run',
      '--rm',
      '--entrypoint',
      'sh',
      `subx/${service}:${TAG}`,
      '-c',
      [
        // Third-party packages ship their own tests; what must not be there is ours.
        'cd /app',
        'find . -name node_modules -prune -o \\( -name "*.test.ts" -o -type d -name test -o -type d -name "fixtures*" \\) -print',
        'for d in packages/testing node_modules/@subx/testing node_modules/vitest node_modules/typescript node_modules/eslint ' +
          'node_modules/playwright-core node_modules/testcontainers node_modules/turbo node_modules/prettier node_modules/@bufbuild/buf; ' +
          'do [ -e "$d" ] && echo "$d"; done',
        'true',
      ].join('; '),
    ]);
    expect(found.split('\n').filter(Boolean)).toEqual([]);
    // and it still is the service: its entry point is there
    const main = await docker([
      'run',
      '--rm',
      '--entrypoint',
      'ls',
      `subx/${service}:${TAG}`,
      `/app/services/${service}/src/main.ts`,
    ]);
    expect(main.trim()).toBe(`/app/services/${service}/src/main.ts`);
  });
});

describe('the extractor image cuts large transcription audio', () => {
  it('has ffmpeg, and a spool directory the runtime user owns', async () => {
    const out = await docker([
      'run',
      '--rm',
      '--user',
      '1000:1000',
      '--entrypoint',
      'sh',
      `subx/extractor:${TAG}`,
      '-c',
      'ffmpeg -hide_banner -version | head -1; stat -c %u /var/spool/subx; touch /var/spool/subx/probe && echo writable',
    ]);
    const [version, owner, writable] = out.trim().split('\n');
    expect(version).toMatch(/^ffmpeg version /);
    expect(owner).toBe('1000');
    expect(writable).toBe('writable');
  });
});

// Shared by test/deploy/helm-*.test.ts: a real `helm template` of deploy/helm/subx and loose
// shapes of the Kubernetes objects the tests read. helm comes from $HELM, PATH, or
// ~/.cache/subx-tools/bin (scripts/validate-deploy.sh installs it there). Without helm the suites
// are skipped loudly, except in CI, where they fail.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { recordRequirement } from '@subx/testing/engines';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export const chartDir = path.join(repoRoot, 'deploy/helm/subx');
export const KUBE_VERSION = '1.33.0';

export const GRPC_COMPONENTS: Record<string, number> = {
  extractor: 50051,
  comments: 50052,
  ai: 50053,
  billing: 50054,
  jobs: 50055,
};
export const ALL_COMPONENTS = ['gateway', 'dashboard', ...Object.keys(GRPC_COMPONENTS)];
export const SECRET_KEYS = [
  'ADMIN_TOKEN',
  'API_KEY_PEPPER',
  'OPENAI_API_KEY',
  'YOUTUBE_PROXIES',
  'SMTP_URL',
  'REDIS_URL',
  'MONGO_URL',
];

function findHelm(): string | undefined {
  const candidates = [
    process.env.HELM,
    ...(process.env.PATH ?? '').split(path.delimiter).map((dir) => path.join(dir, 'helm')),
    path.join(process.env.SUBX_TOOLS_DIR ?? path.join(homedir(), '.cache/subx-tools'), 'bin/helm'),
  ];
  return candidates.find((c): c is string => !!c && existsSync(c));
}

export const helm = findHelm();
if (!helm) {
  if (process.env.CI) {
    throw new Error(
      'helm not found (HELM, PATH, ~/.cache/subx-tools/bin): run scripts/validate-deploy.sh first',
    );
  }
  console.warn(
    '\n#############################################################################\n' +
      '# SKIPPING test/deploy/helm-*.test.ts: helm not found.                     #\n' +
      '# Run `bash scripts/validate-deploy.sh` once (installs a pinned helm), or    #\n' +
      '# set HELM=/path/to/helm. In CI (CI set) this suite fails instead.           #\n' +
      '#############################################################################\n',
  );
}

// Loose shapes of the Kubernetes objects this test reads.
export type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  data?: Record<string, string>;
  spec?: Record<string, unknown>;
};
type Probe = {
  grpc?: { port: number };
  httpGet?: { path: string; port: string | number };
  tcpSocket?: { port: number | string };
};
export type Container = {
  name: string;
  image?: string;
  ports?: { name: string; containerPort: number }[];
  envFrom?: { configMapRef?: { name: string } }[];
  env?: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } };
  }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: {
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    runAsNonRoot?: boolean;
  };
};
export type PodSpec = {
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
  containers: Container[];
  terminationGracePeriodSeconds?: number;
};

export function render(valuesFile: string, extraArgs: string[] = []): Obj[] {
  const out = execFileSync(
    helm as string,
    [
      'template',
      'subx',
      chartDir,
      '--namespace',
      'subx',
      '--kube-version',
      KUBE_VERSION,
      '-f',
      valuesFile,
      ...extraArgs,
    ],
    { encoding: 'utf8', maxBuffer: 32 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return parseAllDocuments(out)
    .map((doc) => doc.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);
}

export const component = (o: Obj): string | undefined => o.metadata.labels?.['app.kubernetes.io/component'];
export const ofKind = (objs: Obj[], kind: string): Obj[] => objs.filter((o) => o.kind === kind);
export const podSpec = (d: Obj): PodSpec => (d.spec as { template: { spec: PodSpec } }).template.spec;
export const enabledComponents = (objs: Obj[]): string[] =>
  ofKind(objs, 'Deployment')
    .map((d) => component(d) ?? '')
    .sort();

export const examples = readdirSync(path.join(chartDir, 'ci')).filter((f) => f.endsWith('.yaml'));

/** Tells the test summary whether a helm suite ran (call inside the suite's describe). */
export function recordHelm(): void {
  recordRequirement({
    kind: 'tool',
    name: 'helm',
    ran: !!helm,
    reason: 'helm not found (HELM, PATH, ~/.cache/subx-tools/bin)',
    enable: 'bash scripts/validate-deploy.sh',
  });
}

// Turns the API schemas of a Kubernetes release and a set of CustomResourceDefinitions into the
// strict JSON schemas kubeconform reads, so `kubeconform -strict` checks the chart's manifests
// against Kubernetes itself, offline:
//
//   node scripts/kube-schemas/build-schemas.ts --kube-version 1.37.2 \
//     --openapi <k8s.io/kubernetes module>/api/openapi-spec/v3 --crd <crd.yaml>... --out <dir>
//
// writes <dir>/kubernetes/v<version>-standalone-strict/<kind>-<group>-<version>.json (kubeconform's
// default layout, used with `-schema-location <dir>/kubernetes`) and
// <dir>/crds/<group>/<kind>_<version>.json (`-schema-location '<dir>/crds/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json'`).
//
// Why not kubeconform's scripts/openapi2jsonschema.py: it converts CRDs only (the Kubernetes
// schemas come from a prebuilt repository we cannot reach), and it needs PyYAML; this file covers
// both with the `yaml` package the repository already has.
//
// What "strict" means here, as in yannh/kubernetes-json-schema's *-strict schemas (kubeconform's
// -strict flag only selects those and rejects duplicate keys): every object schema that lists
// its properties gets `additionalProperties: false`, unless it is a map (has its own
// additionalProperties) or says x-kubernetes-preserve-unknown-fields. The apiserver's strict field
// validation (`kubectl apply --validate=strict`) rejects the same unknown fields. A custom
// resource's `metadata` is checked as the release's ObjectMeta, as the apiserver does.
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parseAllDocuments } from 'yaml';

type Schema = { [key: string]: unknown };
type Gvk = { group: string; version: string; kind: string };

const COMPONENTS_PREFIX = '#/components/schemas/';
const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
// The syntax resource.ParseQuantity accepts, as controller-gen writes it into every CRD's quantity
// fields (e.g. the Prometheus-operator CRDs). The release's own OpenAPI says only "string", so
// without it `memory: lots` would pass here and fail on the apiserver.
const QUANTITY_PATTERN =
  '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';

const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * One OpenAPI v3 (or CRD openAPIV3Schema) node as a draft-4 JSON schema node: `$ref`s point into
 * `#/definitions`, descriptions and x-kubernetes-* extensions are dropped (kubeconform does not read
 * them), `nullable` becomes a "null" type, int-or-string becomes oneOf, and object schemas are closed.
 * `closeBareObjects`: CRD nodes of `type: object` without properties admit nothing (the apiserver
 * prunes and strict validation rejects any field there); native types keep those open
 * (RawExtension, FieldsV1 hold arbitrary content).
 */
function convertNode(node: unknown, refs: Set<string>, closeBareObjects: boolean): unknown {
  if (Array.isArray(node)) return node.map((n) => convertNode(n, refs, closeBareObjects));
  if (!isObject(node)) return node;
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'description' || key === 'nullable' || key.startsWith('x-')) continue;
    if (key === '$ref' && typeof value === 'string') {
      if (!value.startsWith(COMPONENTS_PREFIX)) throw new Error(`unexpected $ref ${value}`);
      const name = value.slice(COMPONENTS_PREFIX.length);
      refs.add(name);
      out.$ref = `#/definitions/${name}`;
    } else if (key === 'properties' && isObject(value)) {
      // Property names are data here, not keywords: convert each value, keep every name.
      out.properties = Object.fromEntries(
        Object.entries(value).map(([name, sub]) => [name, convertNode(sub, refs, closeBareObjects)]),
      );
    } else if (key === 'enum' || key === 'default' || key === 'example' || key === 'required') {
      out[key] = value;
    } else {
      out[key] = convertNode(value, refs, closeBareObjects);
    }
  }
  if (node['x-kubernetes-int-or-string'] === true && !out.oneOf && !out.anyOf) {
    delete out.type;
    out.oneOf = [{ type: 'integer' }, { type: 'string' }];
  }
  if (node.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  const open = node['x-kubernetes-preserve-unknown-fields'] === true || 'additionalProperties' in node;
  const listsProperties = isObject(node.properties);
  const bareObject = node.type === 'object' && !listsProperties;
  if (!open && (listsProperties || (closeBareObjects && bareObject))) out.additionalProperties = false;
  return out;
}

/** The root schema plus, under `definitions`, every definition it reaches (recursion included). */
function standalone(root: Schema, rootRefs: Set<string>, definitions: Map<string, Schema>): Schema {
  const included: Record<string, unknown> = {};
  const pending = [...rootRefs];
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (name in included) continue;
    const source = definitions.get(name);
    if (!source) throw new Error(`$ref to unknown definition ${name}`);
    const refs = new Set<string>();
    included[name] = convertNode(source, refs, false);
    pending.push(...refs);
  }
  return Object.keys(included).length ? { ...root, definitions: included } : root;
}

function kindFileName({ group, version, kind }: Gvk): string {
  // kubeconform's {{ .ResourceKind }}{{ .KindSuffix }}: the group's first label only.
  const groupPart = group ? `-${group.split('.')[0]?.toLowerCase()}` : '';
  return `${kind.toLowerCase()}${groupPart}-${version.toLowerCase()}.json`;
}

function writeJson(file: string, value: unknown): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(value));
}

/** Every definition of every group-version file of the release, by name. */
function loadDefinitions(openapiDir: string): Map<string, Schema> {
  const definitions = new Map<string, Schema>();
  const files = readdirSync(openapiDir).filter((f) => f.endsWith('.json'));
  if (files.length === 0) throw new Error(`no OpenAPI v3 files in ${openapiDir}`);
  for (const file of files) {
    const doc = JSON.parse(readFileSync(path.join(openapiDir, file), 'utf8')) as {
      components?: { schemas?: Record<string, Schema> };
    };
    for (const [name, schema] of Object.entries(doc.components?.schemas ?? {})) {
      if (!definitions.has(name)) definitions.set(name, schema);
    }
  }
  const quantity = definitions.get(QUANTITY);
  if (!quantity) throw new Error(`${openapiDir} defines no ${QUANTITY}`);
  definitions.set(QUANTITY, { oneOf: [{ type: 'string', pattern: QUANTITY_PATTERN }, { type: 'number' }] });
  return definitions;
}

function buildKubernetes(definitions: Map<string, Schema>, outDir: string): number {
  let written = 0;
  const seen = new Set<string>();
  for (const [name, schema] of definitions) {
    const gvks = (schema['x-kubernetes-group-version-kind'] ?? []) as Gvk[];
    // Shared meta types (DeleteOptions, WatchEvent) carry every group's GVK: they are not objects
    // anyone applies. A kind is an object with its own apiVersion/kind fields and one GVK.
    if (gvks.length !== 1 || !isObject(schema.properties) || !('kind' in schema.properties)) continue;
    const file = kindFileName(gvks[0] as Gvk);
    if (seen.has(file)) throw new Error(`two definitions map to ${file} (second: ${name})`);
    seen.add(file);
    const refs = new Set<string>();
    const root = convertNode(schema, refs, false) as Schema;
    writeJson(path.join(outDir, file), standalone(root, refs, definitions));
    written++;
  }
  return written;
}

type Crd = {
  kind?: string;
  spec?: {
    group: string;
    names: { kind: string };
    versions: { name: string; served: boolean; schema?: { openAPIV3Schema?: Schema } }[];
  };
};

function buildCrds(crdFiles: string[], definitions: Map<string, Schema>, outDir: string): string[] {
  const written: string[] = [];
  for (const file of crdFiles) {
    for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
      const crd = doc.toJS() as Crd | null;
      if (crd?.kind !== 'CustomResourceDefinition' || !crd.spec) continue;
      const { group, names, versions } = crd.spec;
      for (const version of versions.filter((v) => v.served)) {
        const source = version.schema?.openAPIV3Schema;
        if (!source) throw new Error(`${file}: ${names.kind} ${version.name} has no openAPIV3Schema`);
        const refs = new Set<string>();
        const root = convertNode(source, refs, true) as Schema;
        const properties = (root.properties ?? {}) as Schema;
        root.properties = { ...properties, metadata: { $ref: `#/definitions/${OBJECT_META}` } };
        refs.add(OBJECT_META);
        const out = path.join(outDir, group, `${names.kind.toLowerCase()}_${version.name}.json`);
        writeJson(out, standalone(root, refs, definitions));
        written.push(`${group}/${version.name} ${names.kind}`);
      }
    }
  }
  return written;
}

function main(): void {
  const { values } = parseArgs({
    options: {
      'kube-version': { type: 'string' },
      openapi: { type: 'string' },
      crd: { type: 'string', multiple: true, default: [] },
      out: { type: 'string' },
    },
  });
  const kubeVersion = values['kube-version'];
  if (!kubeVersion || !values.openapi || !values.out) {
    console.error(
      'usage: build-schemas.ts --kube-version X.Y.Z --openapi <dir> [--crd <file>]... --out <dir>',
    );
    process.exit(2);
  }
  const definitions = loadDefinitions(values.openapi);
  const kinds = buildKubernetes(
    definitions,
    path.join(values.out, 'kubernetes', `v${kubeVersion}-standalone-strict`),
  );
  const crds = buildCrds(values.crd, definitions, path.join(values.out, 'crds'));
  console.log(
    `kube-schemas: ${kinds} Kubernetes ${kubeVersion} kinds, ${crds.length} custom resource versions (${crds.join(', ')}) -> ${values.out}`,
  );
}

main();

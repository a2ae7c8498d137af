// Which way imports may point (`npm test`, scripts/check-dependencies.sh). The layers, bottom up:
//   packages/*  (shared libraries: no service, no script, no test above them)
//   services/*  (each on the packages; another service only through its public entry, index.ts)
//   services/embedded, scripts/, test/, deploy/  (composition and tooling: may import anything)
// Tests may import what they test (a service's own test/ reaches its src/; test/ reaches all).
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'An import circle: the modules cannot be understood, tested or loaded one at a time. ' +
        'Move what both need into a leaf module (see services/gateway/src/access/outbox.ts).',
      from: {},
      to: { circular: true },
    },
    {
      name: 'packages-stay-below-services',
      severity: 'error',
      comment: 'A shared package must not depend on a service: pass what it needs in, or move it down.',
      from: { path: '^packages/' },
      to: { path: '^services/' },
    },
    {
      name: 'no-import-of-tooling',
      severity: 'error',
      comment:
        'packages/ and services/ must not import scripts/, test/ or deploy/ (tooling sits on top); ' +
        'move the shared code into a package or a service and import it from there.',
      from: { path: '^(packages|services)/' },
      to: { path: '^(scripts|test|deploy)/' },
    },
    {
      name: 'services-through-public-entries',
      severity: 'error',
      comment:
        "A service's source reaches another service only through its public entry " +
        '(@subx/<service>, src/index.ts), never into its internals.',
      from: { path: '^services/([^/]+)/src/', pathNot: '\\.test\\.ts$' },
      to: { path: '^services/', pathNot: ['^services/$1/', '^services/[^/]+/src/index\\.ts$'] },
    },
    // The gateway's wings (CONTRIBUTING.md, "Gateway wings"): each feature folder holds its routes,
    // its rows of the operation table and its logic; the floor under them (domain/, http/ and the
    // access, backends and fan-out rooms) serves every wing and knows none.
    {
      name: 'gateway-routes-mounted-by-their-wing',
      severity: 'error',
      comment:
        "A gateway wing's routes (routes.ts, *.routes.ts) are mounted by app.ts or by their own wing; " +
        'another wing uses the logic behind them, never the routes.',
      from: { path: '^services/gateway/src/([^/]+)/' },
      to: {
        path: '^services/gateway/src/[^/]+/(?:routes|[^/]*[.]routes)[.]ts$',
        pathNot: '^services/gateway/src/$1/',
      },
    },
    {
      name: 'gateway-operation-tables-assembled-once',
      severity: 'error',
      comment:
        "A gateway wing's rows of the operation table (*operations.ts) are read by that wing and by " +
        'openapi/, which assembles the whole table; every other user takes the table from openapi/operations.ts.',
      from: { path: '^services/gateway/src/([^/]+)/', pathNot: '^services/gateway/src/openapi/' },
      to: {
        path: '^services/gateway/src/[^/]+/[^/]*operations[.]ts$',
        pathNot: ['^services/gateway/src/$1/', '^services/gateway/src/openapi/'],
      },
    },
    {
      name: 'gateway-floor-imports-no-wing',
      severity: 'error',
      comment:
        'domain/, http/, access/, backends/ and fanout/ are the floor every gateway wing stands on: ' +
        'they import no wing (api, admin, openapi, jobs, watches, webhooks, mcp); pass what they need in.',
      from: { path: '^services/gateway/src/(?:domain|http|access|backends|fanout)/' },
      to: { path: '^services/gateway/src/(?:api|admin|openapi|jobs|watches|webhooks|mcp)/' },
    },
    {
      name: 'gateway-admin-stays-apart',
      severity: 'error',
      comment:
        'The admin API (admin/) has a listener of its own: only the composition root (start-gateway.ts) ' +
        'imports it; the public wings share nothing with it but the floor and the services it drives.',
      from: { path: '^services/gateway/src/[^/]+/', pathNot: '^services/gateway/src/admin/' },
      to: { path: '^services/gateway/src/admin/' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment:
        'An import that does not resolve to a file or an installed package. The generated-client drivers import the types a test generates beside them from the live API.',
      from: { pathNot: '^test/system/generated-clients/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/|^packages/contracts/src/gen/' },
    // Type-only imports count: a circle through `import type` still ties the modules together.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'node', 'default'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'],
    },
    cache: false,
    reporterOptions: { text: { highlightFocused: true } },
  },
};

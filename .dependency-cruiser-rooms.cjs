// The walls between rooms (`npm test`, scripts/check-dependencies.sh): on the code a service or a
// package ships, without its tests (tests import the code they test and its fixtures, so a ring
// through test/ is not a wall), no folder may import one that imports it back, directly or around
// a ring. Such a pair is one room with a wall through it: move what both need into the lower one,
// or into a leaf room both may import, so that imports between rooms point one way.
const base = require('./.dependency-cruiser.cjs');

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-folder-loop',
      severity: 'error',
      scope: 'folder',
      comment:
        'Folders importing each other, directly or around a ring: see the header of .dependency-cruiser-rooms.cjs.',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    ...base.options,
    exclude: { path: `${base.options.exclude.path}|\\.test\\.ts$|^(packages|services)/[^/]+/test/` },
  },
};

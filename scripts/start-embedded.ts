/**
 * `npm start` / `npm run demo`: the one-process launcher lives in services/embedded (its README);
 * this path stays the entry that package.json, scripts/schemathesis.sh and the system tests run.
 */
import '../services/embedded/src/main.ts';

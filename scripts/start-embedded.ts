/**
 * `npm start` / `npm run demo`: the one-process launcher lives in services/embedded (its README);
 * this path stays the entry that package.json, scripts/schemathesis.sh and the system tests run.
 */
import { fileURLToPath } from 'node:url';

// The demo's speech-to-text engine (services/embedded/src/demo-speech.ts) runs this server.
process.env.DEMO_STT_SERVER ||= fileURLToPath(new URL('../services/speech/server.py', import.meta.url));
await import('../services/embedded/src/main.ts');

/**
 * The demo platform of docker compose's `demo` profile (service `demo-youtube`): what `npm run demo`
 * runs in its own process, as a container. It replays the recorded YouTube responses
 * (services/embedded/src/demo.ts, packages/testing/fixtures-recorded) on 0.0.0.0:DEMO_YOUTUBE_PORT — the
 * extractor and comments containers reach it as YOUTUBE_BASE_URL=http://demo-youtube:8079 — and
 * seeds the fixed demo key (DEMO_API_KEY, pro tier) into the stack's MongoDB under the stack's
 * API_KEY_PEPPER, so the README's "Try it" commands answer on localhost:8080 verbatim.
 */
import { MongoClient } from 'mongodb';
import {
  DEMO_ACCOUNT_ID,
  DEMO_API_KEY,
  demoAccountDoc,
  startDemoPlatform,
} from '../../../services/embedded/src/demo.ts';

const SEED_TIMEOUT_MS = 60_000;

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    console.error(`demo-youtube: ${name} must be set (the same value the gateway container gets)`);
    process.exit(2);
  }
  return value;
}

const pepper = required('API_KEY_PEPPER');
const mongoUrl = required('MONGO_URL');
const port = Number(process.env.DEMO_YOUTUBE_PORT ?? '8079');

// Seeded again on every start: the key follows the pepper of the current .env, the rest of the
// account (credits used so far) stays as it is.
const client = new MongoClient(mongoUrl, { serverSelectionTimeoutMS: SEED_TIMEOUT_MS });
try {
  const { key, ...rest } = demoAccountDoc(pepper, new Date());
  const { _id, ...onInsert } = rest;
  await client
    .db(process.env.MONGO_DB ?? 'subx')
    .collection<{ _id: string }>('accounts')
    .updateOne({ _id: DEMO_ACCOUNT_ID }, { $set: { key }, $setOnInsert: onInsert }, { upsert: true });
  void _id;
} finally {
  await client.close();
}

// Listening only once the key is in: the healthcheck (a GET on the replay) then means "ready to try".
const platform = await startDemoPlatform(
  { ...process.env, API_KEY_PEPPER: pepper },
  { host: '0.0.0.0', port },
);
console.log(
  `demo-youtube: replaying recorded YouTube on 0.0.0.0:${port}; demo key ${DEMO_API_KEY} seeded (pro)`,
);

const stop = (): void => {
  void platform.close().then(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

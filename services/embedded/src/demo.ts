/**
 * The offline try-out behind `npm run demo` (`main.ts --demo`): the platform is
 * `@subx/testing/fake-youtube` started in this process, replaying the recorded responses of
 * `packages/testing/fixtures-recorded` (no network), and a fixed, documented pro key is seeded so
 * that the README's curl examples work verbatim. Everything else is the `npm start` system.
 */
import { randomBytes } from 'node:crypto';
import {
  SPEECH_VIDEO_ID,
  fixturesDir,
  generatePlaylist,
  searchPageOf,
  startFakeYouTube,
  videoIds,
} from '@subx/testing/fake-youtube';
import type { FakeYouTube, RouteTable } from '@subx/testing/fake-youtube';
// The demo needs the exact hash the gateway stores: the gateway's public entry gives it.
import { hashApiKey, keyDisplay } from '@subx/gateway';
import type { AccountDoc, AccountRepository } from '@subx/gateway';
import { startDemoEmbeddings } from './demo-embeddings.ts';
import { speechBannerLine, startDemoSpeech } from './demo-speech.ts';

/** The demo's API key (well-formed: `sxk_v1_` + 32 alphanumerics). Only `npm run demo` accepts it. */
export const DEMO_API_KEY = 'sxk_v1_demoDemoDemoDemoDemoDemoDemoDemo';
/** Enough for any amount of trying; the pro tier's daily limit (10,000 requests) still applies. */
export const DEMO_CREDITS = 1_000_000;
/** A playlist of the replayed videos, so its items show successes and failures side by side. */
export const DEMO_PLAYLIST_ID = 'PLsubxDemoPlaylist01';

/** What the banner offers to try: id → what it shows. */
export const DEMO_VIDEOS: { id: string; shows: string }[] = [
  { id: videoIds.manualAndAuto, shows: 'manual + auto-generated English subtitles, full metadata, chapters' },
  { id: videoIds.autoOnly, shows: 'auto-generated English only; comments turned off' },
  { id: videoIds.autoOnlyFrench, shows: 'auto-generated French only (language "fr")' },
  { id: videoIds.audioTracks, shows: 'manual en and en-GB, auto-generated ja' },
  { id: videoIds.noCaptions, shows: 'playable, no captions at all (404 NO_SUBTITLES)' },
  { id: videoIds.private, shows: 'private video (404 VIDEO_UNAVAILABLE, reason private)' },
  {
    id: videoIds.postLive,
    shows: 'a stream that has ended and is still being processed (503 VIDEO_PROCESSING, retryable)',
  },
  { id: videoIds.syntheticComments, shows: 'synthetic comments: 45 threads over 3 pages, with replies' },
];

/** The demo's search: its results are the replayed videos with English subtitles (a job's default). */
export const DEMO_SEARCH_QUERY = 'subx demo';
const SEARCH_VIDEOS = [
  { id: videoIds.manualAndAuto, title: 'The Tide Is Turning - Russian Civil War Fall 1919' },
  { id: videoIds.autoOnly, title: 'Auto-generated English subtitles only' },
  { id: videoIds.audioTracks, title: 'Manual English and British English, auto-generated Japanese' },
];

/** How long the demo's extractor keeps a playlist or channel listing. */
const DEMO_LISTING_CACHE_MS = 2_000;

/** The demo channel: its videos and a Short the replay has; it uploads its newest video on its second listing. */
const DEMO_CHANNEL = {
  channelId: 'UCsubxDemoChannel0000000',
  handle: 'SubxDemo',
  title: 'subx demo channel',
  tabs: { videos: 3, shorts: 1 },
  ids: {
    videos: [videoIds.manualAndAuto, videoIds.autoOnly, videoIds.audioTracks],
    shorts: [videoIds.autoOnlyFrench],
  },
  upcomingUploads: 1,
};

const PLAYLIST_VIDEOS = [videoIds.manualAndAuto, videoIds.autoOnly, videoIds.noCaptions, videoIds.private];

/**
 * The demo playlist: the synthetic playlist page of the fake, with its generated video ids replaced
 * by replayed ones (the page shape stays the fake's own).
 */
function demoPlaylistRoutes(): Partial<RouteTable> {
  const { first } = generatePlaylist({
    playlistId: DEMO_PLAYLIST_ID,
    videos: PLAYLIST_VIDEOS.length,
    title: 'subx demo playlist',
    owner: 'subx demo',
  });
  let page = JSON.stringify(first);
  PLAYLIST_VIDEOS.forEach((id, i) => {
    page = page.replaceAll(`synthv${String(i + 1).padStart(5, '0')}`, id);
  });
  return { videos: {}, continuations: {}, playlists: { [DEMO_PLAYLIST_ID]: { inline: JSON.parse(page) } } };
}

/**
 * The README's calls are written for `localhost:8080`: as written on the default PORT, else with
 * this API's address in place of that one.
 */
function readmeNote(gatewayUrl: string): string {
  const address = new URL(gatewayUrl).host;
  return address.endsWith(':8080')
    ? '  README examples: work as written (localhost:8080 is this API).'
    : `  README examples: written for localhost:8080; this API is at ${address} (PORT): call that address instead.`;
}

/** The demo account's id: fixed, so seeding it again (a container restart) updates the same account. */
export const DEMO_ACCOUNT_ID = 'acct_00000000000000000000000000de7a00';

/**
 * The demo account as the gateway stores it (the `accounts` collection), for the demo container
 * (deploy/docker/demo/main.ts), which seeds the compose stack's MongoDB directly: the key under
 * the stack's API_KEY_PEPPER, the pro tier and DEMO_CREDITS.
 */
export function demoAccountDoc(pepper: string, now: Date): AccountDoc {
  const iso = now.toISOString();
  return {
    _id: DEMO_ACCOUNT_ID,
    tier: 'pro',
    credits: DEMO_CREDITS,
    allowance_month: iso.slice(0, 7),
    email: null,
    created_at: iso,
    updated_at: iso,
    key: {
      hash: hashApiKey(DEMO_API_KEY, pepper),
      ...keyDisplay(DEMO_API_KEY),
      created_at: iso,
      status: 'active',
    },
    holds: {},
  };
}

export interface DemoPlatform {
  youtube: FakeYouTube;
  /** The video of the banner's "Try:" line. */
  tryVideoId: string;
  /** The videos the replay has (the banner's, the dashboard's playground and first request), tryVideoId first. */
  videos: readonly { id: string; shows: string }[];
  /** A pro account whose key is DEMO_API_KEY. */
  seedAccount(accounts: AccountRepository): Promise<{ apiKey: string; account: AccountDoc }>;
  /** Banner lines: the key and the videos to try. */
  banner(gatewayUrl: string): string[];
  close(): Promise<void>;
}

/**
 * Starts the replaying platform and points the environment at it. Must run before the services
 * read their configuration (YOUTUBE_BASE_URL, API_KEY_PEPPER).
 */
export async function startDemoPlatform(
  env: NodeJS.ProcessEnv,
  listen: { host?: string; port?: number } = {},
): Promise<DemoPlatform> {
  const youtube = await startFakeYouTube({
    routes: demoPlaylistRoutes(),
    searchPages: { [DEMO_SEARCH_QUERY]: { inline: searchPageOf(SEARCH_VIDEOS, fixturesDir()) } },
    syntheticChannels: [DEMO_CHANNEL],
    // The platform refusing caption translation, as it does since late 2026, on demand.
    tlangRefused: env.FAKE_YT_TLANG === 'refused',
    ...listen,
  });
  env.YOUTUBE_BASE_URL = youtube.url;
  // The demo channel uploads between a watch's runs: listings are cached seconds, not minutes, so
  // the second run (POST /api/v1/watches/{id}/run) sees the upload at once.
  env.PLAYLIST_CACHE_TTL_MS ||= String(DEMO_LISTING_CACHE_MS);
  const speech = await startDemoSpeech(env);
  const embeddings = await startDemoEmbeddings(env);
  // The seeded key is stored as the gateway stores every key, so the pepper must be known here.
  env.API_KEY_PEPPER ||= randomBytes(32).toString('base64url');
  const pepper = env.API_KEY_PEPPER;
  return {
    youtube,
    tryVideoId: videoIds.manualAndAuto,
    videos: DEMO_VIDEOS,
    async seedAccount(accounts) {
      const { account } = await accounts.createAccount({ tier: 'pro', credits: DEMO_CREDITS });
      const key = { ...account.key, hash: hashApiKey(DEMO_API_KEY, pepper), ...keyDisplay(DEMO_API_KEY) };
      await accounts.collection.updateOne({ _id: account._id }, { $set: { key } });
      return { apiKey: DEMO_API_KEY, account: { ...account, key } };
    },
    banner(gatewayUrl) {
      const width = Math.max(...DEMO_VIDEOS.map((v) => v.id.length));
      return [
        'DEMO: the platform is a local replay of recorded YouTube responses (no network).',
        `  demo API key: ${DEMO_API_KEY}  (fixed; pro tier, ${DEMO_CREDITS.toLocaleString('en')} credits)`,
        '  videos to try (https://youtu.be/<id>):',
        ...DEMO_VIDEOS.map((v) => `    ${v.id.padEnd(width)}  ${v.shows}`),
        `  playlist:     https://www.youtube.com/playlist?list=${DEMO_PLAYLIST_ID}  (${PLAYLIST_VIDEOS.length} of the videos above)`,
        `  channel:      https://www.youtube.com/@${DEMO_CHANNEL.handle}  (videos and a Short; a watch's second run finds its newest video)`,
        `  search:       query "${DEMO_SEARCH_QUERY}"  (${SEARCH_VIDEOS.length} of the videos above, each one extractable)`,
        readmeNote(gatewayUrl),
        speechBannerLine(speech, SPEECH_VIDEO_ID),
        embeddings.line,
      ];
    },
    close: async () => {
      speech.close();
      await embeddings.close();
      await youtube.close();
    },
  };
}

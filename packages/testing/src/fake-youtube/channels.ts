import { readFileSync } from 'node:fs';
import type { FixtureRef, LoadedResponse } from './fixtures.ts';
import type { RouteTable } from './routes.ts';
import { generatePlaylist, lockupViewModel } from './synthetic.ts';

/**
 * Channels and long playlists of the fake (bulk jobs list a channel tab or a whole playlist).
 * - `POST /youtubei/v1/navigation/resolve_url`: the recorded answers by the URL they were recorded for
 *   (`/user/creativecommons`, `/c/JeffGeerling`, ...), the synthetic channels by their handle; any other
 *   URL gets HTTP 404 NOT_FOUND, the platform's answer for a handle nobody has (SYNTHETIC body).
 * - `POST /youtubei/v1/browse {browseId: "UC…", params}`: the recorded tab pages of the recorded channels,
 *   the recorded "not available" alerts, generated pages of the synthetic channels; a tab a channel lacks
 *   answers its home tab selected with no grid, as the platform does (SYNTHETIC); an unknown UC… id gets
 *   the recorded "This channel does not exist." and a malformed id the recorded HTTP 400.
 * - Continuations (recorded tokens read from the mocks' own requests, synthetic `synth-…` tokens) and the
 *   long synthetic playlist are added to the routing table, so the existing continuation routing serves them.
 */

const NP = 'newpipe/43f8e6e/';
const TAB = `${NP}youtubechanneltabextractor/`;
const CH = `${NP}youtubechannelextractor/`;

/** Channel ids of the fixture cases. */
export const channelIds = {
  /** videos tab: 30 lockupViewModel items + continuation (30 more + a token not recorded); /user/creativecommons. */
  creativeCommons: 'UCTwECeGqMZee77BjdoYtI2Q',
  /** shorts tab: 48 shortsLockupViewModel items + continuation (48 more + a token not recorded). */
  doobydobap: 'UCh8gHdtzO2tXd593_bjErWg',
  /** streams tab: 30 "Streamed … ago" items + continuation (27 more, the end); /c/JeffGeerling. */
  jeffGeerling: 'UCR-DXc1voovS8nhAvccRZhg',
  /** videos tab first pages only (the channel-page recordings). */
  kurzgesagt: 'UCsXVk37bltHxD1rDPwtNM8Q',
  captainDisillusion: 'UCEOXxzW2vU0P-0THehuIIeg',
  vsauce: 'UC6nSFpj9HTCZ5t-N3Rm3-HA',
  /** alerts: "removed because it violated our Community Guidelines." */
  removed: 'UCoaO4U_p7G7AwalqSbGCZOA',
  /** alerts: "terminated for a violation of YouTube's Terms of Service." */
  terminated: 'UCTGjY2I-ZUGnwVoWAGRd7XQ',
  /** alerts: "terminated because we received multiple third-party claims of copyright infringement". */
  terminatedCopyright: 'UCI4i4RgFT5ilfMpna4Z_Y8w',
  /** alerts: "This channel does not exist." (also what any unknown UC… id gets). */
  doesNotExist: 'UCAUc4iz6edWerIjlnL8OSSw',
  /** A well-formed id answered with the recorded HTTP 400 INVALID_ARGUMENT (recorded for `DOESNT-EXIST`). */
  refused: 'UCrefusedByThePlatform0A',
  /** SYNTHETIC: 1,234 videos (30 a page), 150 Shorts (48 a page), no live tab; handle @SubxSynthetic. */
  synthetic: 'UCsubxSyntheticChannel0A',
  /**
   * SYNTHETIC: age-gated (every tab answers `channelAgeGateRenderer`, recorded shape); its uploads
   * playlist `UULF…` (videos) holds 130 videos, 100 a page; no Shorts or live playlists. @SubxAgeRestricted.
   */
  ageRestricted: 'UCsubxAgeRestrictedChn0A',
} as const;

/** Channel URLs the fake resolves from recordings, and the synthetic channel's handle URL. */
export const channelUrls = {
  creativeCommons: 'https://www.youtube.com/user/creativecommons',
  jeffGeerling: 'https://www.youtube.com/c/JeffGeerling',
  captainDisillusion: 'https://www.youtube.com/user/CaptainDisillusion',
  vsauce: 'https://www.youtube.com/user/Vsauce',
  synthetic: 'https://www.youtube.com/@SubxSynthetic',
  ageRestricted: 'https://www.youtube.com/@SubxAgeRestricted',
} as const;

/** The age-gated channel's videos, in its uploads playlist's order. */
export const ageRestrictedChannelVideos = 130;
const AGE_RESTRICTED_TITLE = 'Subx Age Restricted';

/** SYNTHETIC: a 1,500-video playlist (100 a page), listed past the public route's 25 by bulk jobs. */
export const longPlaylistId = 'PLsynthLong1500';

export type FakeChannelTab = 'videos' | 'shorts' | 'streams';

/** A generated channel: how many items each tab holds (a tab left out does not exist). */
export interface SyntheticChannelSpec {
  channelId: string;
  handle: string;
  title: string;
  tabs: Partial<Record<FakeChannelTab, number>>;
  /** A tab's video ids, newest first (its count in `tabs`); a tab without them gets generated ids. */
  ids?: Partial<Record<FakeChannelTab, string[]>>;
  /**
   * The newest this many videos of the videos tab are uploaded one per listing: the first listing
   * shows none of them, each later one a video more (so a watch's second run finds one).
   */
  upcomingUploads?: number;
}

const SYNTHETIC_CHANNEL: SyntheticChannelSpec = {
  channelId: channelIds.synthetic,
  handle: 'SubxSynthetic',
  title: 'Subx Synthetic Channel',
  tabs: { videos: 1234, shorts: 150 },
};

/** Video ids of a synthetic tab, 1-based: `synthc00001` (videos), `synths00001` (shorts), `synthl00001` (live). */
export function syntheticChannelVideoId(tab: FakeChannelTab, n: number): string {
  const prefix = tab === 'videos' ? 'synthc' : tab === 'shorts' ? 'synths' : 'synthl';
  return `${prefix}${String(n).padStart(5, '0')}`;
}

/** The tab a request's `params` names (the values the platform's own tab endpoints carry). */
function tabOf(params: unknown): FakeChannelTab | undefined {
  const p = typeof params === 'string' ? decodeURIComponent(params) : '';
  if (p === 'EgZ2aWRlb3PyBgQKAjoA') return 'videos';
  if (p === 'EgZzaG9ydHPyBgUKA5oBAA==') return 'shorts';
  if (p === 'EgdzdHJlYW1z8gYECgJ6AA==') return 'streams';
  return undefined;
}

const json = (value: unknown, status = 200): LoadedResponse => ({
  status,
  contentType: 'application/json; charset=UTF-8',
  body: JSON.stringify(value),
});

const contItem = (token: string) => ({
  continuationItemRenderer: { continuationEndpoint: { continuationCommand: { token } } },
});

function syntheticItem(tab: FakeChannelTab, n: number, given?: string): unknown {
  const id = given ?? syntheticChannelVideoId(tab, n);
  if (tab === 'shorts') {
    return {
      richItemRenderer: {
        content: {
          shortsLockupViewModel: {
            entityId: `shorts-shelf-item-${id}`,
            onTap: { innertubeCommand: { reelWatchEndpoint: { videoId: id } } },
            overlayMetadata: {
              primaryText: { content: `Synthetic short ${n}` },
              secondaryText: { content: `${n}k views` },
            },
          },
        },
      },
    };
  }
  const lockup = lockupViewModel({
    id,
    title: `Synthetic ${tab === 'videos' ? 'video' : 'stream'} ${n}`,
    duration: `${1 + (n % 50)}:${String(n % 60).padStart(2, '0')}`,
  }) as { lockupViewModel: { metadata: { lockupMetadataViewModel: Record<string, unknown> } } };
  const published = `${tab === 'streams' ? 'Streamed ' : ''}${n} days ago`;
  lockup.lockupViewModel.metadata.lockupMetadataViewModel.metadata = {
    contentMetadataViewModel: {
      metadataRows: [
        { metadataParts: [{ text: { content: `${n * 10} views` } }, { text: { content: published } }] },
      ],
    },
  };
  return { richItemRenderer: { content: lockup } };
}

/** A channel's first page in the 2026 shape, `selected` naming the tab shown (home when `grid` is absent). */
function channelPage(spec: SyntheticChannelSpec, selected: string, grid?: unknown[]): unknown {
  const tab = (name: string, title: string) => ({
    tabRenderer: {
      title,
      ...(name === selected ? { selected: true } : {}),
      endpoint: {
        commandMetadata: { webCommandMetadata: { url: `/@${spec.handle}/${name}` } },
        browseEndpoint: { browseId: spec.channelId, canonicalBaseUrl: `/@${spec.handle}` },
      },
      ...(name === selected ? { content: grid ? { richGridRenderer: { contents: grid } } : {} } : {}),
    },
  });
  return {
    _synthetic: 'SYNTHETIC channel page (2026 shapes)',
    responseContext: {},
    header: { pageHeaderRenderer: { pageTitle: spec.title } },
    metadata: {
      channelMetadataRenderer: {
        title: spec.title,
        externalId: spec.channelId,
        vanityChannelUrl: `http://www.youtube.com/@${spec.handle}`,
      },
    },
    contents: {
      twoColumnBrowseResultsRenderer: {
        tabs: [
          tab('featured', 'Home'),
          ...(Object.keys(spec.tabs) as FakeChannelTab[]).map((t) => tab(t, t)),
        ],
      },
    },
  };
}

/** First page and continuation pages of one synthetic tab (30 a page; Shorts 48). */
function syntheticTab(
  spec: SyntheticChannelSpec,
  tab: FakeChannelTab,
  total: number,
  routes: RouteTable,
  /** Newest items not uploaded yet (upcomingUploads): the listing starts after them. */
  notYet = 0,
) {
  const perPage = tab === 'shorts' ? 48 : 30;
  const token = (p: number) => `synth-${spec.channelId}-${tab}-page-${p}${notYet ? `-${notYet}` : ''}`;
  const shown = total - notYet;
  const pages = Math.max(1, Math.ceil(shown / perPage));
  const items = (p: number) => {
    const out: unknown[] = [];
    for (let n = notYet + p * perPage + 1; n <= Math.min(total, notYet + (p + 1) * perPage); n++)
      out.push(syntheticItem(tab, n, spec.ids?.[tab]?.[n - 1]));
    if (p + 1 < pages) out.push(contItem(token(p + 1)));
    return out;
  };
  for (let p = 1; p < pages; p++) {
    routes.continuations[token(p)] ??= {
      inline: {
        _synthetic: 'SYNTHETIC channel tab continuation',
        onResponseReceivedActions: [{ appendContinuationItemsAction: { continuationItems: items(p) } }],
      },
    };
  }
  return channelPage(spec, tab, items(0));
}

/** An age-gated channel's page, every tab alike (NewPipe's recorded shape: no header, the gate in the first tab). */
function ageGatePage(): unknown {
  return {
    _synthetic: 'SYNTHETIC age-gated channel page (recorded shape)',
    responseContext: {},
    contents: {
      twoColumnBrowseResultsRenderer: {
        tabs: [
          {
            tabRenderer: {
              selected: true,
              content: {
                sectionListRenderer: {
                  contents: [
                    {
                      channelAgeGateRenderer: {
                        channelTitle: AGE_RESTRICTED_TITLE,
                        header: { runs: [{ text: 'Age-restricted channel' }] },
                      },
                    },
                  ],
                },
              },
            },
          },
        ],
      },
    },
  };
}

interface ChannelEntry {
  tabs: Partial<Record<FakeChannelTab, FixtureRef>>;
  /** For the home-tab answer of a missing tab. */
  spec?: SyntheticChannelSpec;
}

/** A recorded mock's request body (the token or URL it was recorded for). */
function recordedRequest(dir: string, file: string): { continuation?: string; url?: string } {
  const mock = JSON.parse(readFileSync(dir + file, 'utf8')) as { request: { dataToSend?: number[] } };
  return JSON.parse(Buffer.from(mock.request.dataToSend ?? []).toString('utf8')) as {
    continuation?: string;
    url?: string;
  };
}

/**
 * Registers the channel continuations and the long playlist in `routes`, and returns the router of the
 * channel requests (`undefined`: not a channel request, the fake's own routing goes on).
 */
export function createFakeChannels(o: {
  routes: RouteTable;
  dir: string;
  load: (ref: FixtureRef) => LoadedResponse;
  synthetic?: SyntheticChannelSpec[];
}): { route(endpoint: string, body: Record<string, unknown>): LoadedResponse | undefined } {
  const { routes, dir, load } = o;
  const file = (f: string): FixtureRef => ({ file: f });
  const channels: Record<string, ChannelEntry> = {
    [channelIds.creativeCommons]: { tabs: { videos: file(`${TAB}videos/generated_mock_3.json`) } },
    [channelIds.doobydobap]: { tabs: { shorts: file(`${TAB}shorts/generated_mock_2.json`) } },
    [channelIds.jeffGeerling]: { tabs: { streams: file(`${TAB}livestreams/generated_mock_3.json`) } },
    [channelIds.kurzgesagt]: { tabs: { videos: file(`${CH}kurzgesagt/generated_mock_2.json`) } },
    [channelIds.captainDisillusion]: {
      tabs: { videos: file(`${CH}captaindisillusion/generated_mock_3.json`) },
    },
    [channelIds.vsauce]: { tabs: { videos: file(`${CH}vsauce/generated_mock_3.json`) } },
  };
  const unavailable: Record<string, FixtureRef> = {
    [channelIds.removed]: file(`${CH}notavailable/generated_mock_2.json`),
    [channelIds.terminated]: file(`${CH}notavailable/generated_mock_3.json`),
    [channelIds.doesNotExist]: file(`${CH}notavailable/generated_mock_4.json`),
    'UCPWXIOPK-9myzek6jHR5yrg': file(`${CH}notavailable/generated_mock_5.json`),
    [channelIds.terminatedCopyright]: file(`${CH}notavailable/generated_mock_6.json`),
    'UC-nQp2ewj2Yeg5w7VyoVBwQ': file(`${CH}notavailable/generated_mock_7.json`),
    [channelIds.refused]: file(`${CH}notavailable/generated_mock_8.json`),
  };
  const resolved = new Map<string, FixtureRef | string>();
  for (const f of [
    `${TAB}videos/generated_mock_2.json`,
    `${TAB}livestreams/generated_mock_2.json`,
    `${CH}captaindisillusion/generated_mock_2.json`,
    `${CH}vsauce/generated_mock_2.json`,
  ]) {
    const { url } = recordedRequest(dir, f);
    if (url) resolved.set(new URL(url).pathname.toLowerCase(), file(f));
  }
  for (const f of [
    `${TAB}videos/generated_mock_4.json`,
    `${TAB}shorts/generated_mock_3.json`,
    `${TAB}livestreams/generated_mock_4.json`,
  ]) {
    const { continuation } = recordedRequest(dir, f);
    if (continuation) routes.continuations[continuation] ??= file(f);
  }
  /** Channels whose videos tab grows as it is listed (upcomingUploads): how many are still to come. */
  const upcoming = new Map<string, number>();
  for (const spec of [SYNTHETIC_CHANNEL, ...(o.synthetic ?? [])]) {
    const tabs: ChannelEntry['tabs'] = {};
    for (const [tab, total] of Object.entries(spec.tabs) as [FakeChannelTab, number][])
      tabs[tab] = { inline: syntheticTab(spec, tab, total, routes) };
    if (spec.upcomingUploads) upcoming.set(spec.channelId, spec.upcomingUploads);
    channels[spec.channelId] = { tabs, spec };
    resolved.set(`/@${spec.handle.toLowerCase()}`, spec.channelId);
  }
  const long = generatePlaylist({
    playlistId: longPlaylistId,
    videos: 1500,
    title: 'Synthetic long playlist',
  });
  routes.playlists[longPlaylistId] ??= { inline: long.first };
  for (const [token, page] of long.pages) routes.continuations[token] ??= { inline: page };
  // The age-gated channel: its tabs are gated, its long-form uploads playlist is not.
  const uploads = generatePlaylist({
    playlistId: `UULF${channelIds.ageRestricted.slice(2)}`,
    videos: ageRestrictedChannelVideos,
    title: 'Videos',
    owner: AGE_RESTRICTED_TITLE,
  });
  routes.playlists[`UULF${channelIds.ageRestricted.slice(2)}`] ??= { inline: uploads.first };
  for (const [token, page] of uploads.pages) routes.continuations[token] ??= { inline: page };
  resolved.set('/@subxagerestricted', channelIds.ageRestricted);

  const resolveAnswer = (channelId: string) =>
    json({
      _synthetic: 'SYNTHETIC resolve_url answer (recorded shape)',
      responseContext: {},
      endpoint: {
        commandMetadata: {
          webCommandMetadata: {
            url: '/youtubei/v1/navigation/resolve_url',
            webPageType: 'WEB_PAGE_TYPE_CHANNEL',
            apiUrl: '/youtubei/v1/browse',
          },
        },
        browseEndpoint: { browseId: channelId },
      },
    });

  /** A recorded channel's title and handle, read from one of its recorded tab pages. */
  function recordedSpec(channelId: string, entry: ChannelEntry): SyntheticChannelSpec {
    const ref = Object.values(entry.tabs)[0] as FixtureRef;
    const meta = (
      JSON.parse(load(ref).body) as {
        metadata?: { channelMetadataRenderer?: { title?: string; vanityChannelUrl?: string } };
      }
    ).metadata?.channelMetadataRenderer;
    const handle = /\/@([^/]+)$/.exec(meta?.vanityChannelUrl ?? '')?.[1] ?? channelId;
    return { channelId, handle, title: meta?.title ?? channelId, tabs: {} };
  }

  function browse(browseId: string, params: unknown): LoadedResponse {
    if (browseId === channelIds.ageRestricted) return json(ageGatePage());
    if (!/^UC[A-Za-z0-9_-]{22}$/.test(browseId) || unavailable[browseId])
      return load(unavailable[browseId] ?? file(`${CH}notavailable/generated_mock_8.json`));
    const entry = channels[browseId];
    if (!entry) return load(unavailable[channelIds.doesNotExist] as FixtureRef);
    const tab = tabOf(params) ?? 'featured';
    const notYet = upcoming.get(browseId);
    if (tab === 'videos' && notYet !== undefined && entry.spec?.tabs.videos !== undefined) {
      upcoming.set(browseId, Math.max(0, notYet - 1));
      return json(syntheticTab(entry.spec, 'videos', entry.spec.tabs.videos, routes, notYet));
    }
    const ref = entry.tabs[tab as FakeChannelTab];
    if (ref) return load(ref);
    // the platform's answer to a tab the channel lacks: its home tab (NewPipe: "YouTube should return
    // the Home tab"); recorded channels get a synthetic home page with their own id
    return json(channelPage(entry.spec ?? recordedSpec(browseId, entry), 'featured'));
  }

  return {
    route(endpoint, body) {
      if (endpoint === 'resolve_url') {
        const url = typeof body.url === 'string' ? body.url : '';
        let path: string;
        try {
          path = decodeURIComponent(new URL(url).pathname).toLowerCase().replace(/\/+$/, '');
        } catch {
          path = '';
        }
        const hit = resolved.get(path);
        if (typeof hit === 'string') return resolveAnswer(hit);
        if (hit) return load(hit);
        return json(
          { error: { code: 404, message: 'Requested entity was not found.', status: 'NOT_FOUND' } },
          404,
        );
      }
      if (endpoint === 'browse' && typeof body.browseId === 'string' && !body.continuation) {
        if (!body.browseId.startsWith('UC')) return undefined;
        return browse(body.browseId, body.params);
      }
      return undefined;
    },
  };
}

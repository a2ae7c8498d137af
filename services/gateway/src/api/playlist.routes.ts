import { Errors } from '@subx/errors';
import type { OutputFormat } from '@subx/formats';
import { perItemTimeoutMs } from '@subx/fanout';
import { checkTranscriptionTier, durationsFrom, itemCharges } from '@subx/credits';
import { INCLUDE_FIELDS } from '@subx/public-api';
import type { IncludeField, TranscriptModeName } from '@subx/public-api';
import { apiOperation } from './operations.ts';
import { unknownIncludeNames } from '../http/validation.ts';
import { playlistIdOf } from '@subx/public-api';
import { routeOptions } from '../http/route-context.ts';
import type { RouteRegistrar } from '../http/route-context.ts';
import { jobChunking, withItemChunks } from '@subx/public-api';
import type { ChunkingBody } from './extract-chunks.ts';
import { admissionOf, withReservation } from '../http/reservation.ts';
import { modelSecondsUpFront, withModelBudget } from '@subx/credits';
import { extractItems, settleItems } from './fan-out-items.ts';

interface PlaylistQuery {
  url: string;
  max: number;
  language: string;
  format: OutputFormat;
  include_timestamps: boolean;
  include: string;
  translate: boolean;
  mode: TranscriptModeName;
  'chunking.max_tokens'?: number;
  'chunking.overlap_tokens'?: number;
  'chunking.split'?: 'chapters' | 'none';
}

/** The query's `chunking.*` parameters as extract's `chunking` object; absent when none is given. */
function chunkingOfQuery(query: PlaylistQuery): ChunkingBody | undefined {
  const chunking: ChunkingBody = {
    ...(query['chunking.max_tokens'] !== undefined ? { max_tokens: query['chunking.max_tokens'] } : {}),
    ...(query['chunking.overlap_tokens'] !== undefined
      ? { overlap_tokens: query['chunking.overlap_tokens'] }
      : {}),
    ...(query['chunking.split'] !== undefined ? { split: query['chunking.split'] } : {}),
  };
  return Object.keys(chunking).length > 0 ? chunking : undefined;
}

/** The comma-separated include of the playlist query (empty entries ignored). */
function parseIncludeCsv(csv: string): IncludeField[] {
  const names = csv
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = unknownIncludeNames(names);
  if (bad.length > 0) throw Errors.invalidInclude(bad, INCLUDE_FIELDS);
  return [...new Set(names)] as IncludeField[];
}

export const registerPlaylist: RouteRegistrar = (app, ctx) => {
  const spec = apiOperation('playlist');
  const { credits, fanOut, clock, config, backends } = ctx.deps;

  app.get<{ Querystring: PlaylistQuery }>(spec.path, routeOptions(ctx, spec), async (request) => {
    const query = request.query;
    const include = parseIncludeCsv(query.include);
    // Checked before anything is listed or reserved: chunks need timed json items.
    const chunking = jobChunking({ ...query, chunking: chunkingOfQuery(query) });
    const playlistId = playlistIdOf(query.url);
    const { account } = admissionOf(request);
    const tierMax = checkTranscriptionTier(query.mode, account.tier, ctx.pricing);
    // A playlist is answered while the client waits: extract's cap on audio applies to its items too.
    const maxAudioSeconds = Math.min(tierMax, config.TRANSCRIBE_SYNC_MAX_SECONDS);
    const started = performance.now();
    // The listing comes first (the extractor caches it): the worst case is then the videos really
    // there, all successful, not `max` (a 3-video playlist needs 3 credits, whatever `max` says).
    const playlist = await backends.extractor.getPlaylist(
      { playlistId, maxVideos: query.max },
      {
        requestId: request.id,
        deadlineMs: Math.min(config.GRPC_DEADLINE_MS, config.PLAYLIST_TIMEOUT_MS),
      },
    );
    const videoIds = playlist.videoIds.slice(0, query.max);
    const items = videoIds.map((id) => ({ url: `https://www.youtube.com/watch?v=${id}`, videoId: id }));
    const charges = await itemCharges(
      videoIds,
      { translate: query.translate, mode: query.mode, capSeconds: maxAudioSeconds },
      ctx.pricing,
      durationsFrom(
        backends.extractor,
        request.id,
        Math.max(
          1,
          Math.min(
            config.GRPC_DEADLINE_MS,
            config.PLAYLIST_TIMEOUT_MS - Math.round(performance.now() - started),
          ),
        ),
      ),
    );
    return withReservation(credits, request, 'playlist', charges.total, async (reservation) => {
      const left = Math.max(0, config.PLAYLIST_TIMEOUT_MS - Math.round(performance.now() - started));
      // The model's daily budget: items asking for audio take its length, settled on what was made.
      const outcome = await withModelBudget(
        ctx.modelBudget,
        account,
        modelSecondsUpFront(query.mode, charges.audioSeconds),
        () =>
          extractItems(fanOut, request, items, {
            language: query.language,
            include,
            translate: query.translate,
            mode: query.mode,
            maxAudioSeconds,
            tier: account.tier,
            charges,
            format: query.format,
            includeTimestamps: query.include_timestamps,
            totalTimeoutMs: left,
            itemTimeoutMs: perItemTimeoutMs(
              config.PLAYLIST_TIMEOUT_MS,
              items.length,
              config.FANOUT_MIN_ITEM_TIMEOUT_MS,
            ),
          }),
        (result) => result.modelSeconds,
      );
      const settled = await settleItems(request, reservation, outcome, items.length, { clock });
      return {
        playlist: {
          title: playlist.title,
          uploader: playlist.uploader,
          total_videos: playlist.totalVideos,
        },
        extracted_count: items.length,
        ...settled,
        ...(chunking ? { results: withItemChunks(settled.results, chunking) } : {}),
      };
    });
  });
};

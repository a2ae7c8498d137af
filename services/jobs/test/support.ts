/**
 * What the job service's tests share: an account as the gateway stores it, and the extractor as far
 * as a job of URLs needs it.
 */
import type { ExtractorBackend } from '@subx/backends';
import { commonV1, extractorV1 } from '@subx/contracts';
import type { StoredRetention } from '@subx/contracts/retention';
import type { DocumentStore } from '@subx/ports';

export const ACCOUNT = 'acct_0123456789abcdef0123456789abcdef';
export const PRO = { id: ACCOUNT, tier: 'pro', keyId: 'key_one' };
export const watchUrl = (id: string) => `https://www.youtube.com/watch?v=${id}`;
export const VIDEOS = ['dQw4w9WgXcQ', 'jNQXAC9IVRw', '9bZkp7q19f0'];

/** The extractor as far as a job of URLs needs it: a transcript per video, a duration per video. */
export function fakeExtractor(calls: string[]): ExtractorBackend {
  const unexpected = (name: string) => () => Promise.reject(new Error(`unexpected ${name}`));
  return {
    getTranscript: async (request) => {
      calls.push(request.videoId);
      return extractorV1.GetTranscriptResponse.fromPartial({
        videoId: request.videoId,
        language: 'en',
        subtitleType: commonV1.SubtitleType.SUBTITLE_TYPE_MANUAL,
        segments: [
          { text: `first words of ${request.videoId}`, start: 0, duration: 2.5, words: [] },
          { text: 'and the rest', start: 2.5, duration: 3, words: [] },
        ],
        metadata: { title: `Video ${request.videoId}`, duration: 60 },
      });
    },
    validateVideo: async (request) =>
      extractorV1.ValidateVideoResponse.fromPartial({
        valid: true,
        duration: 60,
        videoTitle: request.videoId,
      }),
    getPlaylist: unexpected('getPlaylist'),
    listPlaylistVideos: unexpected('listPlaylistVideos'),
    listChannelVideos: unexpected('listChannelVideos'),
    search: unexpected('search'),
    listSearchVideos: unexpected('listSearchVideos'),
    checkHealth: async () => true,
    checkPlatform: async () => true,
  };
}

/** The pro account `ACCOUNT` as the gateway stores it, with `credits` and its data retention if any. */
export async function seedAccount(
  store: DocumentStore,
  credits: number,
  retention?: StoredRetention,
): Promise<void> {
  const now = new Date();
  await store.collection('accounts').insertOne({
    _id: ACCOUNT,
    tier: 'pro',
    credits,
    allowance_month: now.toISOString().slice(0, 7),
    updated_at: now.toISOString(),
    holds: {},
    email: null,
    created_at: now.toISOString(),
    ...(retention ? { retention } : {}),
  });
}

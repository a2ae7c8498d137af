import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { parseCommentsEntry } from './next.ts';
import { classifyPlayability } from './player.ts';
import { parsePlaylistPage } from './playlist.ts';

/** Shapes the platform answers since Aug 2026 (packages/testing/src/fake-youtube/README.md, today mode). */

const player = (status: string, reason: string, extra: Record<string, unknown> = {}) => ({
  playabilityStatus: { status, reason, ...extra },
  videoDetails: { videoId: 'aaaaaaaaaaa' },
});

describe('playability of today', () => {
  it('an ERROR from one client is "not found" waiting for confirmation, not a verdict', () => {
    const v = classifyPlayability(player('ERROR', 'This video is unavailable'), 'aaaaaaaaaaa');
    expect(v).toMatchObject({ ok: false, definitive: false, unconfirmedNotFound: true });
    expect(!v.ok && v.error.code).toBe('VIDEO_NOT_FOUND');
    const empty = classifyPlayability({}, 'aaaaaaaaaaa');
    expect(empty).toMatchObject({ ok: false, definitive: false, unconfirmedNotFound: true });
  });

  it('"The page needs to be reloaded" is a retryable block, a session signal', () => {
    const v = classifyPlayability(player('ERROR', 'The page needs to be reloaded.'), 'aaaaaaaaaaa');
    expect(v).toMatchObject({ ok: false, definitive: false, sessionSignal: true });
    expect(!v.ok && [v.error.code, v.error.reason, v.error.retryable]).toEqual([
      'UPSTREAM_BLOCKED',
      'page_reload',
      true,
    ]);
  });

  it('LOGIN_REQUIRED that is neither age nor privacy is a retryable block; age and privacy stay verdicts', () => {
    const v = classifyPlayability(player('LOGIN_REQUIRED', 'Sign in to continue'), 'aaaaaaaaaaa');
    expect(!v.ok && [v.error.code, v.error.reason]).toEqual(['UPSTREAM_BLOCKED', 'login_required']);
    const priv = classifyPlayability(player('LOGIN_REQUIRED', 'This video is private'), 'aaaaaaaaaaa');
    expect(!priv.ok && [priv.error.code, priv.error.reason, priv.definitive]).toEqual([
      'VIDEO_UNAVAILABLE',
      'private',
      true,
    ]);
    const age = classifyPlayability(
      player('LOGIN_REQUIRED', 'Đăng nhập để xác nhận tuổi của bạn', { desktopLegacyAgeGateReason: 1 }),
      'aaaaaaaaaaa',
    );
    expect(!age.ok && age.error.reason).toBe('age_restricted');
  });
});

const lockup = (id: string) => ({
  lockupViewModel: { contentId: id, contentType: 'LOCKUP_CONTENT_TYPE_VIDEO' },
});

describe('playlist first pages of today', () => {
  it('reads a flat first page: lockups straight in an itemSectionRenderer, then a continuationItemViewModel', () => {
    const page = {
      header: { pageHeaderRenderer: { pageTitle: 'Flat' } },
      contents: {
        twoColumnBrowseResultsRenderer: {
          tabs: [
            {
              tabRenderer: {
                content: {
                  sectionListRenderer: {
                    contents: [
                      {
                        itemSectionRenderer: {
                          contents: [
                            lockup('aaaaaaaaaa1'),
                            lockup('aaaaaaaaaa2'),
                            {
                              continuationItemViewModel: {
                                continuationCommand: { token: 'next-page' },
                              },
                            },
                          ],
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
    expect(parsePlaylistPage(page)).toMatchObject({
      title: 'Flat',
      videoIds: ['aaaaaaaaaa1', 'aaaaaaaaaa2'],
      nextToken: 'next-page',
    });
  });
});

describe('comments entry of today', () => {
  const watch = (sectionContents: unknown[], extra: Record<string, unknown> = {}) => ({
    contents: {
      twoColumnWatchNextResults: {
        results: {
          results: {
            contents: [
              {
                itemSectionRenderer: { sectionIdentifier: 'comment-item-section', contents: sectionContents },
              },
            ],
          },
        },
        ...extra,
      },
    },
  });

  it('a watch page without any comments entry is "missing" (build the token), never "disabled"', () => {
    expect(parseCommentsEntry(watch([]))).toMatchObject({ disabled: false, missing: true });
    expect(parseCommentsEntry({ contents: { twoColumnWatchNextResults: {} } })).toMatchObject({
      disabled: false,
      missing: true,
    });
  });

  it('only the explicit "turned off" message or a live chat means disabled', () => {
    const off = watch([{ messageRenderer: { text: { runs: [{ text: 'Comments are turned off. ' }] } } }]);
    expect(parseCommentsEntry(off).disabled).toBe(true);
    const other = watch([{ messageRenderer: { text: { runs: [{ text: 'Something else' }] } } }]);
    expect(parseCommentsEntry(other)).toMatchObject({ disabled: false, missing: true });
    const live = watch([], { conversationBar: { liveChatRenderer: {} } });
    expect(parseCommentsEntry(live).disabled).toBe(true);
  });
});

describe('the interstitial error screen (October 2026)', () => {
  const synthetic = (name: string): unknown =>
    JSON.parse(
      readFileSync(new URL(`../../../testing/fixtures-synthetic/player/${name}`, import.meta.url), 'utf8'),
    );

  it('a bot check shown as an interstitial is bot_check, a retryable block and a session signal', () => {
    const v = classifyPlayability(synthetic('interstitial-bot-check.json'), 'aaaaaaaaaaa');
    expect(v).toMatchObject({ ok: false, definitive: false, sessionSignal: true });
    expect(!v.ok && [v.error.code, v.error.reason, v.error.retryable]).toEqual([
      'UPSTREAM_BLOCKED',
      'bot_check',
      true,
    ]);
  });

  it('an age gate shown as an interstitial is VIDEO_UNAVAILABLE age_restricted, a verdict', () => {
    const v = classifyPlayability(synthetic('interstitial-age-gate.json'), 'aaaaaaaaaaa');
    expect(v).toMatchObject({ ok: false, definitive: true });
    expect(!v.ok && [v.error.code, v.error.reason]).toEqual(['VIDEO_UNAVAILABLE', 'age_restricted']);
  });

  it('a geo block shown as an interstitial is geo_blocked', () => {
    const v = classifyPlayability(
      {
        playabilityStatus: {
          status: 'UNPLAYABLE',
          errorScreen: {
            playerInterstitialRenderer: {
              content: {
                interstitialViewModel: {
                  title: { content: 'Video unavailable' },
                  description: { content: 'The uploader has not made this video available in your country' },
                },
              },
            },
          },
        },
        videoDetails: { videoId: 'aaaaaaaaaaa' },
      },
      'aaaaaaaaaaa',
    );
    expect(!v.ok && [v.error.code, v.error.reason]).toEqual(['VIDEO_UNAVAILABLE', 'geo_blocked']);
  });
});

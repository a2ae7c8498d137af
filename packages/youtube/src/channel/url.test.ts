import { describe, expect, it } from 'vitest';
import { canonicalChannelUrl, parseChannelUrl } from './url.ts';

describe('parseChannelUrl', () => {
  it.each([
    ['https://www.youtube.com/@kurzgesagt', { ref: { kind: 'handle', handle: 'kurzgesagt' } }],
    ['https://youtube.com/@kurzgesagt/', { ref: { kind: 'handle', handle: 'kurzgesagt' } }],
    [
      'https://m.youtube.com/@kurzgesagt/videos',
      { ref: { kind: 'handle', handle: 'kurzgesagt' }, tab: 'videos' },
    ],
    [
      'https://www.youtube.com/@Doobydobap/shorts?si=abc',
      { ref: { kind: 'handle', handle: 'Doobydobap' }, tab: 'shorts' },
    ],
    [
      'http://www.youtube.com/@x.y-z_1/streams',
      { ref: { kind: 'handle', handle: 'x.y-z_1' }, tab: 'streams' },
    ],
    ['https://www.youtube.com/@kurzgesagt/featured', { ref: { kind: 'handle', handle: 'kurzgesagt' } }],
    // handles in other scripts come percent-encoded
    [
      'https://www.youtube.com/@%E3%81%AB%E3%81%98%E3%81%95%E3%82%93%E3%81%98',
      { ref: { kind: 'handle', handle: 'にじさんじ' } },
    ],
    [
      'https://www.youtube.com/channel/UCsXVk37bltHxD1rDPwtNM8Q',
      { ref: { kind: 'id', channelId: 'UCsXVk37bltHxD1rDPwtNM8Q' } },
    ],
    [
      'https://www.youtube.com/channel/UCR-DXc1voovS8nhAvccRZhg/streams?view=0',
      { ref: { kind: 'id', channelId: 'UCR-DXc1voovS8nhAvccRZhg' }, tab: 'streams' },
    ],
    ['https://www.youtube.com/c/JeffGeerling', { ref: { kind: 'custom', name: 'JeffGeerling' } }],
    [
      'https://www.youtube.com/c/JeffGeerling/videos',
      { ref: { kind: 'custom', name: 'JeffGeerling' }, tab: 'videos' },
    ],
    ['https://www.youtube.com/user/creativecommons', { ref: { kind: 'user', name: 'creativecommons' } }],
    ['  https://www.youtube.com/user/Vsauce/  ', { ref: { kind: 'user', name: 'Vsauce' } }],
  ])('%s', (input, expected) => {
    expect(parseChannelUrl(input)).toEqual(expected);
  });

  it.each([
    '@kurzgesagt',
    'UCsXVk37bltHxD1rDPwtNM8Q',
    'www.youtube.com/@kurzgesagt',
    'https://music.youtube.com/channel/UCsXVk37bltHxD1rDPwtNM8Q',
    'https://youtu.be/@kurzgesagt',
    'https://evil.example/@kurzgesagt',
    'https://user@www.youtube.com/@kurzgesagt',
    'https://www.youtube.com:8443/@kurzgesagt',
    'https://www.youtube.com/@ab',
    'https://www.youtube.com/@a-handle-that-is-far-too-long-for-youtube',
    'https://www.youtube.com/@bad%2Fslash',
    'https://www.youtube.com/@bad%ZZ',
    'https://www.youtube.com/@ka\tzgesagt',
    'https://www.youtube.com/@kurzgesagt/live',
    'https://www.youtube.com/@kurzgesagt/videos/extra',
    'https://www.youtube.com//@kurzgesagt',
    'https://www.youtube.com/@kurzgesagt//videos',
    'https://www.youtube.com/channel/UCshort',
    'https://www.youtube.com/channel/XXsXVk37bltHxD1rDPwtNM8Q',
    'https://www.youtube.com/channel/',
    'https://www.youtube.com/c/',
    'https://www.youtube.com/user/a b',
    'https://www.youtube.com/kurzgesagt',
    'https://www.youtube.com/watch?v=F1xioXWb8CY',
    'https://www.youtube.com/playlist?list=PL8dPuuaLjXtOAKed_MxxWBNaPno5h3Zs8',
    '',
  ])('refuses %j', (input) => {
    expect(parseChannelUrl(input)).toBeNull();
  });
});

describe('canonicalChannelUrl', () => {
  it('rebuilds the URL from its parts only (the caller string is never sent)', () => {
    expect(canonicalChannelUrl({ kind: 'handle', handle: 'にじさんじ' })).toBe(
      'https://www.youtube.com/@%E3%81%AB%E3%81%98%E3%81%95%E3%82%93%E3%81%98',
    );
    expect(canonicalChannelUrl({ kind: 'custom', name: 'JeffGeerling' })).toBe(
      'https://www.youtube.com/c/JeffGeerling',
    );
    expect(canonicalChannelUrl({ kind: 'user', name: 'creativecommons' })).toBe(
      'https://www.youtube.com/user/creativecommons',
    );
    const parsed = parseChannelUrl('https://m.youtube.com/@kurzgesagt/videos?si=tracking#frag');
    expect(parsed && canonicalChannelUrl(parsed.ref)).toBe('https://www.youtube.com/@kurzgesagt');
  });
});

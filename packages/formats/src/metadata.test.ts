import { describe, expect, it } from 'vitest';
import { answerHeadJson, publicMetadata } from './metadata.ts';

const metadata = {
  title: 'Ünïcödé "q" \u2028 😀',
  channel: 'Channel',
  channelId: 'UC123',
  duration: 125,
  uploadDate: '20240102',
  thumbnailUrl: 'https://i.ytimg.com/vi/aaaaaaaaaaa/hqdefault.jpg',
  tags: { values: ['a', 'b'] },
  viewCount: 12345678901n,
  chapters: { values: [{ title: 'Intro', startTime: 0 }] },
  isLive: false,
};

describe('publicMetadata', () => {
  it('has the six fields always, and each requested one in alphabetical order, whatever the order asked', () => {
    for (const include of [
      ['view_count', 'tags', 'chapters', 'is_live'],
      ['is_live', 'chapters', 'tags', 'view_count', 'tags'],
    ]) {
      const out = publicMetadata(metadata, include);
      expect(Object.keys(out)).toEqual([
        'title',
        'channel',
        'channel_id',
        'duration',
        'upload_date',
        'thumbnail_url',
        'chapters',
        'is_live',
        'tags',
        'view_count',
      ]);
      expect(out).toMatchObject({
        chapters: [{ title: 'Intro', start_time: 0 }],
        is_live: false,
        tags: ['a', 'b'],
        view_count: 12345678901,
      });
    }
  });

  it('answers a requested field the platform did not give as empty or null, and ignores unknown names', () => {
    expect(
      publicMetadata(undefined, ['description', 'categories', 'like_count', 'was_live', 'no_such_field']),
    ).toEqual({
      title: '',
      channel: '',
      channel_id: '',
      duration: 0,
      upload_date: '',
      thumbnail_url: '',
      categories: [],
      description: '',
      like_count: null,
      was_live: null,
    });
  });
});

describe('answerHeadJson', () => {
  it('is the members a json answer starts with, without braces', () => {
    const head = answerHeadJson({
      videoId: 'aaaaaaaaaaa',
      metadata,
      include: ['tags'],
      language: 'en',
      subtitleType: 'auto_generated',
    });
    expect(head.startsWith('"video_id":"aaaaaaaaaaa","metadata":{"title":')).toBe(true);
    expect(JSON.parse(`{${head}}`)).toEqual({
      video_id: 'aaaaaaaaaaa',
      metadata: publicMetadata(metadata, ['tags']),
      language: 'en',
      subtitle_type: 'auto_generated',
    });
    expect(Object.keys(JSON.parse(`{${head}}`))).toEqual([
      'video_id',
      'metadata',
      'language',
      'subtitle_type',
    ]);
  });
});

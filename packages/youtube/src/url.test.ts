import { describe, expect, it } from 'vitest';
import { parsePlaylistUrl, parseVideoUrl } from './url.ts';

describe('parseVideoUrl', () => {
  it.each([
    ['https://www.youtube.com/watch?v=F1xioXWb8CY', 'F1xioXWb8CY'],
    ['https://youtube.com/watch?v=F1xioXWb8CY', 'F1xioXWb8CY'],
    ['https://www.youtube.com/watch?v=F1xioXWb8CY#t=1', 'F1xioXWb8CY'],
    ['https://www.youtube.com/watch?feature=share&v=F1xioXWb8CY&t=10', 'F1xioXWb8CY'],
    ['http://youtube.com/watch?v=F1xioXWb8CY', 'F1xioXWb8CY'],
    ['https://m.youtube.com/watch?v=F1xioXWb8CY', 'F1xioXWb8CY'],
    ['https://music.youtube.com/watch?v=F1xioXWb8CY&list=RDAMVM', 'F1xioXWb8CY'],
    ['https://youtu.be/F1xioXWb8CY', 'F1xioXWb8CY'],
    ['https://youtu.be/F1xioXWb8CY?t=42', 'F1xioXWb8CY'],
    ['https://www.youtube.com/shorts/tjz2u2DiveM', 'tjz2u2DiveM'],
    ['https://www.youtube.com/live/X4VbdwhkE10?feature=share', 'X4VbdwhkE10'],
    ['https://www.youtube.com/embed/_cMxraX_5RE', '_cMxraX_5RE'],
    ['  https://www.youtube.com/watch?v=don-t-exist  ', 'don-t-exist'],
    ['https://youtu.be/F1xioXWb8CY/', 'F1xioXWb8CY'],
    ['https://www.youtube.com/shorts/tjz2u2DiveM/', 'tjz2u2DiveM'],
  ])('%s → %s', (input, id) => {
    expect(parseVideoUrl(input)).toBe(id);
  });

  it.each([
    'F1xioXWb8CY',
    'www.youtube.com/watch?v=F1xioXWb8CY',
    'ftp://www.youtube.com/watch?v=F1xioXWb8CY',
    'https://www.youtube.com/watch?v=F1xioXWb8C',
    'https://www.youtube.com/watch?v=F1xioXWb8CYY',
    'https://www.youtube.com/watch?v=F1xio$Wb8CY',
    'https://www.youtube.com/watch',
    'https://evil.example/watch?v=F1xioXWb8CY',
    'https://www.youtube.com.evil.example/watch?v=F1xioXWb8CY',
    'https://www.youtube.com/shorts/',
    'https://www.youtube.com/playlist?list=PL8dPuuaLjXtOAKed_MxxWBNaPno5h3Zs8',
    'not a url',
    // A path after the id, user info, a port, control characters: read as written, never repaired.
    'https://www.youtube.com/watch/extra?v=F1xioXWb8CY',
    'https://youtu.be/F1xioXWb8CY/extra',
    'https://www.youtube.com/shorts/tjz2u2DiveM/extra',
    'https://user@youtube.com/watch?v=F1xioXWb8CY',
    'https://user:pw@www.youtube.com/watch?v=F1xioXWb8CY',
    'https://@youtu.be/F1xioXWb8CY',
    'https://www.youtube.com:8443/watch?v=F1xioXWb8CY',
    'https://youtu.be:443/F1xioXWb8CY',
    'https://youtu.be/F1xioXW\tb8CY',
    'https://youtu.be/F1xioXWb8CY\n',
    'https://www.youtube.com/watch?v=F1xio\u0000XWb8CY',
    'https://www.youtube.com/watch?v=F1xioXWb8CY\u0085',
  ])('rejects %s', (input) => {
    expect(parseVideoUrl(input)).toBeNull();
  });
});

describe('parsePlaylistUrl', () => {
  it('reads list= from /playlist and from watch URLs', () => {
    expect(parsePlaylistUrl('https://www.youtube.com/playlist?list=PL8dPuuaLjXtOAKed_MxxWBNaPno5h3Zs8')).toBe(
      'PL8dPuuaLjXtOAKed_MxxWBNaPno5h3Zs8',
    );
    expect(parsePlaylistUrl('https://youtube.com/watch?v=F1xioXWb8CY&list=UUSHBR8-60-B28hp2BmDPdntcQ')).toBe(
      'UUSHBR8-60-B28hp2BmDPdntcQ',
    );
  });
  it('rejects other shapes', () => {
    expect(parsePlaylistUrl('https://www.youtube.com/watch?v=F1xioXWb8CY')).toBeNull();
    expect(parsePlaylistUrl('https://youtu.be/F1xioXWb8CY?list=PL1')).toBeNull();
    expect(parsePlaylistUrl('https://example.com/playlist?list=PL8dPuuaLjXtOAKed')).toBeNull();
    expect(parsePlaylistUrl('https://www.youtube.com/playlist?list=bad id!')).toBeNull();
  });
});

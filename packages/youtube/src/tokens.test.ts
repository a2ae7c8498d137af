import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fixturesDir } from '@subx/testing/fake-youtube';
import { commentsContinuation, playlistContinuation } from './tokens.ts';

/** The continuation token a recorded NewPipe request was sent with. */
function recordedToken(file: string): string {
  const mock = JSON.parse(readFileSync(fixturesDir() + file, 'utf8')) as {
    request: { dataToSend: number[] };
  };
  return (JSON.parse(Buffer.from(mock.request.dataToSend).toString('utf8')) as { continuation: string })
    .continuation;
}

describe('continuations built from an id', () => {
  it('reproduces the first-page playlist token NewPipe built, byte for byte', () => {
    expect(playlistContinuation('PL8dPuuaLjXtOAKed_MxxWBNaPno5h3Zs8')).toBe(
      recordedToken('newpipe/62b3c3b/playlist/learning/generated_mock_3.json'),
    );
    expect(playlistContinuation('PLWwAypAcFRgKAIIFqBr9oy-ZYZnixa_Fj')).toBe(
      recordedToken('newpipe/43f8e6e/youtubeplaylistextractor/hugeplaylist/generated_mock_3.json'),
    );
  });

  it('encodes another start index in the position field', () => {
    const token = playlistContinuation('PLx', 100);
    const raw = Buffer.from(token, 'base64url');
    // field 3 (tag 0x1a) holds the percent-encoded base64 of the position message
    const at = raw.indexOf(0x1a, raw.indexOf('VLPLx') + 5);
    const params = decodeURIComponent(
      raw.subarray(at + 2, at + 2 + (raw[at + 1] as number)).toString('latin1'),
    );
    expect([...Buffer.from(params, 'base64')]).toEqual([0x08, 100, 0xc2, 0x06, 0x02, 0x08, 0x00]);
  });

  it('reproduces the first comments-page token of a watch page, byte for byte', () => {
    expect(commentsContinuation('xaQJbozY_Is')).toBe(
      recordedToken('newpipe/43f8e6e/youtubecommentsextractor/replies/generated_mock_3.json'),
    );
    expect(commentsContinuation('D00Au7k3i6o')).toBe(
      recordedToken('newpipe/43f8e6e/youtubecommentsextractor/thomas/generated_mock_3.json'),
    );
  });
});

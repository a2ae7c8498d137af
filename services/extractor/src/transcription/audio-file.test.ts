/**
 * The audio's way to disk and into parts, on the real recordings of the fake platform's
 * captionless video (70 s of espeak-ng speech, Opus in WebM and AAC in MP4) and Debian's ffmpeg.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { recordRequirement } from '@subx/testing/engines';
import { audioWorkspace, findFfmpeg, inputFormatOf, spoolAudio, splitAudio } from './audio-file.ts';

const AUDIO = new URL('../../../../packages/testing/audio/', import.meta.url).pathname;
const SPEECH_SECONDS = 70.25;
const ffmpegRuns = spawnSync('ffmpeg', ['-version'], { timeout: 10_000 }).status === 0;

const scratch = mkdtempSync(join(tmpdir(), 'audio-file-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The file's bytes as the download yields them: pieces of `size`. */
async function* piecesOf(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.byteLength; at += size) yield bytes.slice(at, at + size);
}

/** Seconds of audio ffprobe reads in a file. */
function probeSeconds(path: string): number {
  const r = spawnSync(
    'ffprobe',
    ['-v', 'error', '-show_entries', 'format=duration', '-of', 'default=nw=1:nk=1', path],
    { encoding: 'utf8', timeout: 10_000 },
  );
  return Number(r.stdout.trim());
}

describe('spoolAudio', () => {
  it('writes the pieces in order to a new file and counts the bytes', async () => {
    const source = readFileSync(join(AUDIO, 'speech.webm'));
    const path = join(scratch, 'spooled.webm');
    const bytes = await spoolAudio(piecesOf(source, 64 * 1024), path);
    expect(bytes).toBe(source.byteLength);
    expect(readFileSync(path).equals(source)).toBe(true);
    // Never over an existing file: two transcriptions must not share one.
    await expect(spoolAudio(piecesOf(source, 1024), path)).rejects.toMatchObject({ code: 'EEXIST' });
  });

  it('a workspace is removed with everything in it', async () => {
    const workspace = await audioWorkspace(scratch);
    await spoolAudio(piecesOf(new Uint8Array(10), 4), join(workspace.dir, 'a.webm'));
    await workspace.dispose();
    expect(readdirSync(scratch)).not.toContain(workspace.dir.split('/').pop());
  });
});

describe('splitAudio without ffmpeg', () => {
  it('keeps audio that fits as one part, and refuses larger audio clearly', async () => {
    const path = join(AUDIO, 'speech.webm');
    const size = statSync(path).size;
    const options = {
      maxPartBytes: size,
      durationSeconds: SPEECH_SECONDS,
      ffmpeg: undefined,
      timeoutMs: 10_000,
      inputFormat: 'matroska',
    };
    await expect(splitAudio(path, size, scratch, 'webm', options)).resolves.toEqual([
      { path, startSeconds: 0, durationSeconds: SPEECH_SECONDS },
    ]);
    await expect(
      splitAudio(path, size, scratch, 'webm', { ...options, maxPartBytes: size - 1 }),
    ).rejects.toMatchObject({ code: 'AUDIO_TOO_LONG', details: { max_bytes: size - 1 } });
  });

  it('finds no ffmpeg where the configured one does not run', async () => {
    await expect(findFfmpeg('/nonexistent/ffmpeg')).resolves.toBeUndefined();
  });
});

describe.skipIf(!ffmpegRuns && !process.env.CI)('splitAudio with ffmpeg', () => {
  recordRequirement({
    kind: 'tool',
    name: 'ffmpeg',
    ran: ffmpegRuns || !!process.env.CI,
    reason: 'ffmpeg is not on PATH',
    enable: 'apt-get install ffmpeg',
  });

  for (const [file, extension] of [
    ['speech.webm', 'webm'],
    ['speech.m4a', 'm4a'],
  ] as const) {
    it(`cuts ${file} into parts under the limit, in order, that cover the whole audio`, async () => {
      expect(ffmpegRuns, 'ffmpeg runs').toBe(true);
      const path = join(AUDIO, file);
      const size = statSync(path).size;
      // A limit of about 40% of the file: three parts.
      const maxPartBytes = Math.floor(size * 0.4);
      const dir = mkdtempSync(join(scratch, 'split-'));
      const parts = await splitAudio(path, size, dir, extension, {
        maxPartBytes,
        durationSeconds: SPEECH_SECONDS,
        ffmpeg: await findFfmpeg('ffmpeg'),
        timeoutMs: 60_000,
        inputFormat: inputFormatOf(extension === 'webm' ? 'audio/webm' : 'audio/mp4'),
      });
      expect(parts.length).toBeGreaterThanOrEqual(3);
      expect(parts[0]!.startSeconds).toBe(0);
      for (const [i, part] of parts.entries()) {
        expect(statSync(part.path).size).toBeLessThanOrEqual(maxPartBytes);
        expect(part.path.endsWith(`.${extension}`)).toBe(true);
        // Each part is a file of its own that decodes, as long as the segment list says.
        expect(probeSeconds(part.path)).toBeCloseTo(part.durationSeconds, 0);
        if (i > 0) {
          const previous = parts[i - 1]!;
          expect(part.startSeconds).toBeCloseTo(previous.startSeconds + previous.durationSeconds, 1);
        }
      }
      const covered = parts.reduce((sum, p) => sum + p.durationSeconds, 0);
      expect(covered).toBeGreaterThan(SPEECH_SECONDS - 0.5);
      expect(covered).toBeLessThan(SPEECH_SECONDS + 0.5);
    });
  }

  it('reads the container the MIME type declares, never one it guesses from the bytes', async () => {
    expect(ffmpegRuns, 'ffmpeg runs').toBe(true);
    // MP4 bytes served as WebM: read as declared they are no Matroska, and the split fails
    // instead of ffmpeg picking whatever demuxer the bytes look like.
    const path = join(AUDIO, 'speech.m4a');
    const size = statSync(path).size;
    const dir = mkdtempSync(join(scratch, 'declared-'));
    await expect(
      splitAudio(path, size, dir, 'webm', {
        maxPartBytes: Math.floor(size * 0.4),
        durationSeconds: SPEECH_SECONDS,
        ffmpeg: await findFfmpeg('ffmpeg'),
        timeoutMs: 60_000,
        inputFormat: inputFormatOf('audio/webm; codecs="opus"'),
      }),
    ).rejects.toThrow(/ffmpeg exited/);
  });

  it('names the demuxer of each declared type', () => {
    expect(inputFormatOf('audio/webm; codecs="opus"')).toBe('matroska');
    expect(inputFormatOf('audio/mp4; codecs="mp4a.40.2"')).toBe('mov');
    expect(inputFormatOf('audio/mpeg')).toBe('mp3');
  });
});

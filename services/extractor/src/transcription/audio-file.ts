/**
 * A video's audio on its way to the model: spooled to a temporary file as the ranged download
 * yields it (one piece in memory at a time, the file capped by the download's own byte cap), then
 * cut into parts the endpoint takes in one request when it is larger than that.
 *
 * Why a file rather than memory: a transcription holds its audio for as long as the model takes
 * (minutes for an hour of speech), and a few in flight would otherwise hold tens of megabytes each.
 * The upload reads the file back as a disk-backed Blob (`fs.openAsBlob`), so it streams too.
 *
 * Why ffmpeg for the cut: the audio is a container (WebM or MP4), and a byte range of one is not a
 * file a model can read. ffmpeg's segment muxer re-wraps the same frames into parts of about the
 * wanted length without re-encoding (`-c copy`; every Opus and AAC frame is a cut point), and its
 * segment list tells each part's true start, which is the offset added to that part's timings.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, open, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { AppError } from '@subx/errors';

/** One file the endpoint takes in one request, and where it starts in the whole audio. */
export interface AudioPart {
  path: string;
  /** Seconds from the start of the whole audio. */
  startSeconds: number;
  /** Seconds of audio in this part, when known (0: unknown). */
  durationSeconds: number;
}

/** A temporary directory holding one transcription's audio; `dispose` removes it. */
export interface AudioWorkspace {
  readonly dir: string;
  dispose(): Promise<void>;
}

export async function audioWorkspace(parent: string): Promise<AudioWorkspace> {
  const dir = await mkdtemp(join(parent, 'subx-audio-'));
  return { dir, dispose: () => rm(dir, { recursive: true, force: true }) };
}

/** Writes the pieces to `path` in order, each released once written; the bytes written. */
export async function spoolAudio(pieces: AsyncIterable<Uint8Array>, path: string): Promise<number> {
  const file = await open(path, 'wx');
  let bytes = 0;
  try {
    for await (const piece of pieces) {
      let at = 0;
      while (at < piece.byteLength) {
        const { bytesWritten } = await file.write(piece, at, piece.byteLength - at);
        at += bytesWritten;
      }
      bytes += piece.byteLength;
    }
  } finally {
    await file.close();
  }
  return bytes;
}

export interface SplitOptions {
  /** The endpoint's per-request limit in bytes. */
  maxPartBytes: number;
  /** The whole audio's length in seconds (from the platform; 0 when unknown). */
  durationSeconds: number;
  /** The ffmpeg executable; undefined when there is none (larger audio is then refused). */
  ffmpeg: string | undefined;
  /** Bound on each ffmpeg run. */
  timeoutMs: number;
  /** ffmpeg's demuxer for the audio's declared container (inputFormatOf). */
  inputFormat: string;
}

/** ffmpeg's demuxer for a declared audio MIME type: WebM (Matroska), MPEG audio, else MP4 (mov). */
export function inputFormatOf(mimeType: string): string {
  const type = mimeType.toLowerCase();
  if (type.startsWith('audio/webm')) return 'matroska';
  if (type.startsWith('audio/mpeg')) return 'mp3';
  return 'mov';
}

/** Headroom under the limit: the parts of a variable-bitrate stream are not all the same size. */
const PART_FILL = 0.9;
/** Parts shorter than this would cost more in requests than they save. */
const MIN_PART_SECONDS = 10;
/** Attempts with ever shorter parts before giving up on a stream whose parts will not fit. */
const SPLIT_ATTEMPTS = 3;

const tooLarge = (maxBytes: number, why: string) =>
  new AppError(
    'AUDIO_TOO_LONG',
    `The video's audio is larger than the ${maxBytes} bytes the model takes in one request, ${why}.`,
    { details: { max_bytes: maxBytes } },
  );

/**
 * The audio at `path` as parts of at most `maxPartBytes`: itself when it fits, else the parts
 * ffmpeg cuts (in `dir`), each with its start from the segment list.
 */
export async function splitAudio(
  path: string,
  bytes: number,
  dir: string,
  extension: string,
  options: SplitOptions,
): Promise<AudioPart[]> {
  if (bytes <= options.maxPartBytes) {
    return [{ path, startSeconds: 0, durationSeconds: options.durationSeconds }];
  }
  if (options.ffmpeg === undefined)
    throw tooLarge(options.maxPartBytes, 'and no ffmpeg is set up to split it');
  if (options.durationSeconds <= 0) throw tooLarge(options.maxPartBytes, 'and its length is unknown');
  let partSeconds = Math.floor((options.durationSeconds * options.maxPartBytes * PART_FILL) / bytes);
  for (let attempt = 1; attempt <= SPLIT_ATTEMPTS && partSeconds >= MIN_PART_SECONDS; attempt += 1) {
    const partsDir = join(dir, `parts-${attempt}`);
    const parts = await segment(path, partsDir, extension, partSeconds, options);
    const sizes = await Promise.all(parts.map((p) => stat(p.path).then((s) => s.size)));
    if (sizes.every((size) => size <= options.maxPartBytes)) return parts;
    await rm(partsDir, { recursive: true, force: true });
    partSeconds = Math.floor(partSeconds / 2);
  }
  throw tooLarge(options.maxPartBytes, 'and it could not be cut into parts that fit');
}

/** ffmpeg's segment muxer, copying the stream; the parts in order with their starts. */
async function segment(
  input: string,
  partsDir: string,
  extension: string,
  partSeconds: number,
  options: SplitOptions,
): Promise<AudioPart[]> {
  await mkdir(partsDir);
  const list = join(partsDir, 'parts.csv');
  await run(
    options.ffmpeg!,
    [
      '-nostdin',
      '-v',
      'error',
      // Only the spooled file is read: no URL, concat or other protocol a crafted input could name.
      '-protocol_whitelist',
      'file',
      // The container the platform declared (its MIME type), not one ffmpeg guesses from the bytes.
      '-f',
      options.inputFormat,
      '-i',
      input,
      '-map',
      '0:a:0',
      '-c',
      'copy',
      '-f',
      'segment',
      '-segment_time',
      String(partSeconds),
      '-reset_timestamps',
      '1',
      '-segment_list',
      list,
      '-segment_list_type',
      'csv',
      join(partsDir, `part-%04d.${extension}`),
    ],
    options.timeoutMs,
  );
  // Lines of `part-0000.webm,0.000000,600.021000`: file, start, end (seconds).
  const parts: AudioPart[] = [];
  for (const line of (await readFile(list, 'utf8')).split('\n')) {
    const [file, start, end] = line.trim().split(',');
    if (!file || start === undefined || end === undefined) continue;
    const startSeconds = Number(start);
    const endSeconds = Number(end);
    if (!Number.isFinite(startSeconds) || !Number.isFinite(endSeconds)) continue;
    parts.push({
      path: join(partsDir, file),
      startSeconds,
      durationSeconds: Math.max(0, endSeconds - startSeconds),
    });
  }
  if (parts.length === 0) throw new Error('ffmpeg wrote no parts');
  return parts;
}

/** Stderr kept for an error message, no more. */
const STDERR_CAP = 4096;

function run(command: string, args: string[], timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: timeoutMs });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < STDERR_CAP) stderr += chunk.slice(0, STDERR_CAP - stderr.length);
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else
        reject(
          new Error(
            `ffmpeg ${signal ? `stopped by ${signal}` : `exited ${code}`}${stderr ? `: ${stderr.trim()}` : ''}`,
          ),
        );
    });
  });
}

/** The ffmpeg to split with: `configured` when it runs, else undefined. */
export async function findFfmpeg(configured: string): Promise<string | undefined> {
  try {
    await run(configured, ['-nostdin', '-v', 'error', '-version'], 10_000);
    return configured;
  } catch {
    return undefined;
  }
}

import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';

/**
 * The continuation tokens a client builds itself instead of reading them from a page: the first playlist
 * page after a header-only answer (NewPipe's YoutubePlaylistExtractor) and the first comments page of a
 * watch page without a comments entry (yt-dlp's _generate_comment_continuation, NewPipe's comments
 * extractor). The fake PARSES them (it does not look them up), so any playlist or video id works. Wire
 * encoding by @bufbuild/protobuf; the field numbers are YouTube's, read off the recorded NewPipe requests.
 */

type Fields = Map<number, (number | Uint8Array)[]>;

/** Top-level fields of a protobuf message: varints as numbers, length-delimited values as bytes. */
function readFields(bytes: Uint8Array): Fields {
  const reader = new BinaryReader(bytes);
  const out: Fields = new Map();
  while (reader.pos < reader.len) {
    const [no, type] = reader.tag();
    let value: number | Uint8Array | undefined;
    if (type === WireType.Varint) value = reader.uint32();
    else if (type === WireType.LengthDelimited) value = reader.bytes();
    else reader.skip(type, no);
    if (value !== undefined) out.set(no, [...(out.get(no) ?? []), value]);
  }
  return out;
}

const bytesOf = (f: Fields, no: number): Uint8Array | undefined => {
  const v = f.get(no)?.[0];
  return v instanceof Uint8Array ? v : undefined;
};
const numberOf = (f: Fields, no: number): number | undefined => {
  const v = f.get(no)?.[0];
  return typeof v === 'number' ? v : undefined;
};
const text = (b: Uint8Array | undefined): string | undefined =>
  b ? new TextDecoder('utf-8', { fatal: true }).decode(b) : undefined;

/** Percent-decoding, then base64 in either alphabet, padded or not; undefined when it is not base64. */
function decodeTokenBytes(token: string): Uint8Array | undefined {
  let raw: string;
  try {
    raw = decodeURIComponent(token);
  } catch {
    return undefined;
  }
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(raw)) return undefined;
  return new Uint8Array(Buffer.from(raw, 'base64'));
}

function safely<T>(parse: () => T | undefined): T | undefined {
  try {
    return parse();
  } catch {
    // a token that is not the protobuf we expect is simply not ours
    return undefined;
  }
}

// ------------------------------------------------------------------ playlists

/** browse continuation: field 80226972 wraps {2: "VL"+id, 3: params, 35: id}. */
const PLAYLIST_CONTINUATION_FIELD = 80226972;

/** params = percent-encoded base64 of {1: start index, 104: {1: 0}}. */
function playlistParams(start: number): string {
  const bytes = new BinaryWriter()
    .tag(1, WireType.Varint)
    .uint32(start)
    .tag(104, WireType.LengthDelimited)
    .fork()
    .tag(1, WireType.Varint)
    .uint32(0)
    .join()
    .finish();
  return encodeURIComponent(Buffer.from(bytes).toString('base64'));
}

/** The continuation NewPipe builds from a playlist id after a header-only first answer. */
export function buildPlaylistContinuation(playlistId: string, start = 0): string {
  const bytes = new BinaryWriter()
    .tag(PLAYLIST_CONTINUATION_FIELD, WireType.LengthDelimited)
    .fork()
    .tag(2, WireType.LengthDelimited)
    .string(`VL${playlistId}`)
    .tag(3, WireType.LengthDelimited)
    .string(playlistParams(start))
    .tag(35, WireType.LengthDelimited)
    .string(playlistId)
    .join()
    .finish();
  return Buffer.from(bytes).toString('base64url');
}

export interface PlaylistContinuation {
  playlistId: string;
  /** Index of the first item the page should hold. */
  start: number;
}

export function parsePlaylistContinuation(token: string): PlaylistContinuation | undefined {
  return safely(() => {
    const bytes = decodeTokenBytes(token);
    if (!bytes) return undefined;
    const outer = bytesOf(readFields(bytes), PLAYLIST_CONTINUATION_FIELD);
    if (!outer) return undefined;
    const inner = readFields(outer);
    const playlistId = text(bytesOf(inner, 35)) ?? text(bytesOf(inner, 2))?.replace(/^VL/, '');
    if (!playlistId) return undefined;
    const params = text(bytesOf(inner, 3));
    const paramBytes = params ? decodeTokenBytes(params) : undefined;
    const start = paramBytes ? (numberOf(readFields(paramBytes), 1) ?? 0) : 0;
    return { playlistId, start };
  });
}

// ------------------------------------------------------------------ comments

const COMMENTS_SECTION = 'comments-section';

/**
 * The first comments page's continuation, built from the video id:
 * {2: {2: id}, 3: 6, 6: {4: {4: id, 6: 0, 15: 2}, 8: "comments-section"}}, standard base64 with `=` as %3D.
 */
export function buildCommentsContinuation(videoId: string): string {
  const bytes = new BinaryWriter()
    .tag(2, WireType.LengthDelimited)
    .fork()
    .tag(2, WireType.LengthDelimited)
    .string(videoId)
    .join()
    .tag(3, WireType.Varint)
    .uint32(6)
    .tag(6, WireType.LengthDelimited)
    .fork()
    .tag(4, WireType.LengthDelimited)
    .fork()
    .tag(4, WireType.LengthDelimited)
    .string(videoId)
    .tag(6, WireType.Varint)
    .uint32(0)
    .tag(15, WireType.Varint)
    .uint32(2)
    .join()
    .tag(8, WireType.LengthDelimited)
    .string(COMMENTS_SECTION)
    .join()
    .finish();
  return Buffer.from(bytes).toString('base64').replace(/=/g, '%3D');
}

/** The video id of a comments continuation in the shape above (undefined for any other token). */
export function parseCommentsContinuation(token: string): string | undefined {
  return safely(() => {
    const bytes = decodeTokenBytes(token);
    if (!bytes) return undefined;
    const top = readFields(bytes);
    const target = bytesOf(top, 2);
    const section = bytesOf(top, 6);
    if (!target || !section) return undefined;
    if (text(bytesOf(readFields(section), 8)) !== COMMENTS_SECTION) return undefined;
    return text(bytesOf(readFields(target), 2));
  });
}

// ------------------------------------------------------------------ visitor data

const ID_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * A fresh visitorData in YouTube's shape (percent-encoded base64 of {1: 11-char visitor id, 5: unix
 * seconds}); YouTube.js decodes field 1 as the visitor id.
 */
export function freshVisitorData(now = Date.now()): string {
  const id = Array.from(
    { length: 11 },
    () => ID_CHARS[Math.floor(Math.random() * ID_CHARS.length)] as string,
  ).join('');
  const bytes = new BinaryWriter()
    .tag(1, WireType.LengthDelimited)
    .string(id)
    .tag(5, WireType.Varint)
    .uint32(Math.floor(now / 1000))
    .finish();
  return encodeURIComponent(Buffer.from(bytes).toString('base64'));
}

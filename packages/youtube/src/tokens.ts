/**
 * Continuation tokens the client builds itself, when the platform's first answer does not carry one:
 * - the first page of a playlist whose first `/browse` answer is header-only (NewPipe's method,
 *   `YoutubePlaylistExtractor`): reproduces byte for byte the token NewPipe recorded for
 *   PL8dPuuaLjXtOAKed_MxxWBNaPno5h3Zs8 (fixtures-recorded/newpipe/62b3c3b/playlist/learning/generated_mock_3.json);
 * - the first comments page of a video whose watch-next has no comments entry (yt-dlp's
 *   `_generate_comment_continuation`, in the exact shape NewPipe recorded for xaQJbozY_Is, with the
 *   `comments-section` target id).
 * Both are protobuf messages; the few fields needed are written by hand rather than pulling in a
 * protobuf runtime for two constant shapes.
 */

/** A protobuf varint (non-negative integers). */
export function varint(n: number): number[] {
  const out: number[] = [];
  let v = n;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}

/** A length-delimited protobuf field (a string or an embedded message). */
export function field(num: number, value: Uint8Array | string): number[] {
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  return [...varint(num * 8 + 2), ...varint(bytes.length), ...bytes];
}

const concat = (...parts: number[][]) => Uint8Array.from(parts.flat());

/** The first continuation of a playlist, built from its id: items from index `start` (0: the first page). */
export function playlistContinuation(playlistId: string, start = 0): string {
  // {1: start (varint), 104: {1: 0}} → base64 → percent-encoded: the "params" field of the browse request
  const position = Uint8Array.from([0x08, ...varint(start), 0xc2, 0x06, 0x02, 0x08, 0x00]);
  const params = encodeURIComponent(Buffer.from(position).toString('base64'));
  const inner = concat(field(2, `VL${playlistId}`), field(3, params), field(35, playlistId));
  return Buffer.from(concat(field(80226972, inner))).toString('base64url');
}

/** The first comments page ("top comments") of a video, built from its id. */
export function commentsContinuation(videoId: string): string {
  const target = concat(
    field(4, concat(field(4, videoId), [0x30, 0x00], [0x78, 0x02])),
    field(8, 'comments-section'),
  );
  const msg = concat(field(2, concat(field(2, videoId))), [0x18, 0x06], field(6, target));
  return Buffer.from(msg).toString('base64').replaceAll('=', '%3D');
}

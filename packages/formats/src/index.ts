export type {
  Segment,
  Word,
  DocumentMetadata,
  DocumentInput,
  OutputFormat,
  DocumentFormat,
} from './types.ts';
export { OUTPUT_FORMATS } from './types.ts';
export { toSrt, toVtt, toTxt, toMarkdown, toPlainText, renderDocument, CONTENT_TYPES } from './documents.ts';
export { publicSegments, publicSegmentsJson, type PublicSegment } from './segments.ts';
export { answerHeadJson, publicMetadata } from './metadata.ts';
export type { AnswerHead, MetadataSource } from './metadata.ts';
export { cueLines, cueLine, stripMarkup } from './text.ts';
export { decodeEntities } from './entities.ts';
export { toCues } from './cues.ts';
export type { Cue } from './cues.ts';
export { srtTimestamp, vttTimestamp, clockTime } from './time.ts';
export { parseSrtStrict } from './strict-srt.ts';
export type { SrtCue } from './strict-srt.ts';
export { chunkTranscript, CHUNKING_LIMITS } from './chunks.ts';
export type { Chunk, ChunkingOptions, ChapterMark } from './chunks.ts';

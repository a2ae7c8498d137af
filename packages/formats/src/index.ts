export type { Segment, DocumentMetadata, DocumentInput, OutputFormat, DocumentFormat } from './types.ts';
export { OUTPUT_FORMATS } from './types.ts';
export { toSrt, toVtt, toTxt, toMarkdown, toPlainText, renderDocument, CONTENT_TYPES } from './documents.ts';
export { cueLines, cueLine } from './text.ts';
export { toCues } from './cues.ts';
export type { Cue } from './cues.ts';
export { srtTimestamp, vttTimestamp, clockTime } from './time.ts';
export { parseSrtStrict } from './strict-srt.ts';
export type { SrtCue } from './strict-srt.ts';

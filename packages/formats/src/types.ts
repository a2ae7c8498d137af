/** One word of a segment with its own times (`include: ["words"]`). */
export interface Word {
  text: string;
  /** Seconds. */
  start: number;
  /** Seconds. */
  end: number;
}

/** The inputs every document format is rendered from (the public API's field names). */
export interface Segment {
  text: string;
  /** Seconds. */
  start: number;
  /** Seconds. */
  duration: number;
  /** Where the source times words (a speech engine, an auto-generated track); may be empty. */
  words?: readonly Word[];
}

/** The part of the video metadata the text formats show (md heading, channel and duration lines). */
export interface DocumentMetadata {
  title: string;
  channel: string;
  /** Seconds. */
  duration: number;
}

export const OUTPUT_FORMATS = ['json', 'srt', 'vtt', 'txt', 'md'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];
/** Formats rendered as a text document rather than the JSON result object. */
export type DocumentFormat = Exclude<OutputFormat, 'json'>;

export interface DocumentInput {
  segments: readonly Segment[];
  metadata: DocumentMetadata;
  /** false: plain-text mode (md drops the [M:SS] prefixes; srt/vtt always need timing). */
  includeTimestamps: boolean;
}

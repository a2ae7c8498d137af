// webvtt-parser (w3c/webvtt.js) ships no types; only what the tests use.
declare module 'webvtt-parser' {
  export interface ParsedCue {
    startTime: number;
    endTime: number;
    text: string;
  }
  export interface ParseResult {
    cues: ParsedCue[];
    errors: { message: string; line: number; col?: number }[];
  }
  export class WebVTTParser {
    constructor(entities?: Record<string, string>);
    parse(input: string, mode?: 'metadata' | 'chapters'): ParseResult;
  }
}

/**
 * The model path: any OpenAI-compatible chat-completions endpoint (OpenAI, Azure-style proxies,
 * vLLM, Ollama, LM Studio, ...) through the official `openai` client, which owns timeouts and
 * retries (exponential backoff, honouring Retry-After on 429/503). Every reply is a structured
 * output (`response_format: json_schema`) validated with zod; an invalid reply gets exactly one
 * repair turn. Transcripts over the token budget are summarised map-reduce style.
 */
import OpenAI, { APIConnectionError, APIError } from 'openai';
import { AppError, Errors } from '@subx/errors';
import {
  batchByBudget,
  splitIntoPromptWindows,
  estimateTokens,
  transcriptTokens,
} from '../domain/prompt-windows.ts';
import {
  analysisMessages,
  chunkNotesMessages,
  condenseNotesMessages,
  encodeData,
  repairMessage,
  summaryFromNotesMessages,
  summaryMessages,
} from '../domain/prompts.ts';
import type { ChatMessage, ChunkNote } from '../domain/prompts.ts';
import { verifyQuotes } from '../domain/quotes.ts';
import { normalizeWhitespace, stripAnnotations, truncateAtWord } from '../domain/text.ts';
import { groundTimestamps } from '../domain/timestamps.ts';
import { MAX_THEMES } from '../domain/types.ts';
import type { SummaryStyle, TimestampItem, Transcript, TranscriptSegment } from '../domain/types.ts';
import type { AiEngine } from './engine.ts';
import { analysisSchema, notesSchema, pointsSummarySchema, proseSummarySchema } from './schemas.ts';
import type { StructuredSchema } from './schemas.ts';

export interface ModelEngineOptions {
  /** e.g. https://api.openai.com/v1; undefined: the client's default. */
  readonly baseUrl?: string | undefined;
  readonly apiKey: string;
  readonly model: string;
  /** Per HTTP attempt. */
  readonly timeoutMs: number;
  /** Retries after the first attempt (429, 5xx, timeouts, connection errors). */
  readonly maxRetries: number;
  /** Token budget of one transcript chunk, and of the notes fed to the reduce step. */
  readonly chunkTokens: number;
  /** Chunk calls in flight at once during the map step. */
  readonly concurrency?: number;
  readonly onEvent?: (event: ModelEvent) => void;
}

export type ModelEvent =
  | { type: 'repair'; schema: string; problem: string }
  | { type: 'map_reduce'; chunks: number; tokens: number };

/** Raised when the model's reply is still invalid after the repair turn. */
class InvalidModelOutputError extends AppError {
  constructor(schema: string, problem: string) {
    super('UPSTREAM_ERROR', 'The AI model returned an answer in an unexpected format. Please retry.', {
      details: { schema },
      cause: new Error(problem),
    });
  }
}

type Check<T> = { ok: true; value: T } | { ok: false; problem: string };

function describeIssues(error: {
  issues: readonly { path: readonly PropertyKey[]; message: string }[];
}): string {
  return error.issues
    .slice(0, 5)
    .map((i) => `${i.path.length > 0 ? i.path.map(String).join('.') : '(root)'}: ${i.message}`)
    .join('; ');
}

/** Some compatible servers wrap JSON in a Markdown fence even in JSON mode. */
function unfence(content: string): string {
  const m = /^\s*```(?:json)?\s*([\s\S]*?)\s*```\s*$/i.exec(content);
  return m ? m[1]! : content;
}

function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof APIConnectionError) return Errors.serviceUnavailable('AI model', err);
  if (err instanceof APIError) {
    const status = err.status ?? 0;
    if (status === 429 || status >= 500 || status === 408) return Errors.serviceUnavailable('AI model', err);
    // 400/401/403/404 from the model endpoint are our configuration or request, not the caller's.
    return Errors.internal(err);
  }
  return Errors.internal(err);
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  });
  await Promise.all(workers);
  return results;
}

/** Brief summaries are 2-3 sentences; a model that writes more is cut at the third sentence end. */
function limitSentences(text: string, max: number): string {
  const parts = normalizeWhitespace(text).split(/(?<=[.!?。！？])\s+/u);
  return parts.slice(0, max).join(' ');
}

function renderSummary(style: SummaryStyle, reply: { summary?: string; points?: string[] }): string {
  if (style === 'key_points') {
    return (reply.points ?? [])
      .map((p) => normalizeWhitespace(p).replace(/^(?:[-*•]|\d+[.)])\s*/u, ''))
      .filter((p) => p !== '')
      .slice(0, 12)
      .map((p) => `- ${p}`)
      .join('\n');
  }
  const text = normalizeWhitespace(reply.summary ?? '');
  return style === 'brief' ? limitSentences(text, 3) : text;
}

export function createModelEngine(options: ModelEngineOptions): AiEngine {
  const client = new OpenAI({
    apiKey: options.apiKey,
    baseURL: options.baseUrl ?? null,
    timeout: options.timeoutMs,
    maxRetries: options.maxRetries,
  });
  const concurrency = options.concurrency ?? 3;
  const budget = options.chunkTokens;

  async function completeJson<T>(messages: readonly ChatMessage[], schema: StructuredSchema<T>): Promise<T> {
    const request = async (msgs: readonly ChatMessage[]): Promise<{ content: string; refused: boolean }> => {
      try {
        const completion = await client.chat.completions.create({
          model: options.model,
          messages: msgs.map((m) => ({ role: m.role, content: m.content })),
          response_format: {
            type: 'json_schema',
            json_schema: { name: schema.name, strict: true, schema: schema.jsonSchema },
          },
        });
        const message = completion.choices[0]?.message;
        return { content: message?.content ?? '', refused: Boolean(message?.refusal) };
      } catch (err) {
        throw toAppError(err);
      }
    };
    const attempt = ({ content, refused }: { content: string; refused: boolean }): Check<T> => {
      if (refused) return { ok: false, problem: 'the reply was a refusal instead of the JSON object' };
      let json: unknown;
      try {
        json = JSON.parse(unfence(content));
      } catch {
        return { ok: false, problem: 'the reply is not parseable JSON' };
      }
      const parsed = schema.parse.safeParse(json);
      return parsed.success
        ? { ok: true, value: parsed.data }
        : { ok: false, problem: describeIssues(parsed.error) };
    };

    const first = await request(messages);
    const firstResult = attempt(first);
    if (firstResult.ok) return firstResult.value;
    options.onEvent?.({ type: 'repair', schema: schema.name, problem: firstResult.problem });
    const second = await request([
      ...messages,
      { role: 'assistant', content: first.content.slice(0, 4000) },
      repairMessage(firstResult.problem),
    ]);
    const secondResult = attempt(second);
    if (secondResult.ok) return secondResult.value;
    throw new InvalidModelOutputError(schema.name, secondResult.problem);
  }

  async function finalSummary(
    style: SummaryStyle,
    messages: readonly ChatMessage[],
  ): Promise<{ summary: string; timestamps: TimestampItem[] }> {
    if (style === 'key_points') {
      const reply = await completeJson(messages, pointsSummarySchema);
      return { summary: renderSummary(style, reply), timestamps: reply.timestamps };
    }
    const reply = await completeJson(messages, proseSummarySchema);
    return { summary: renderSummary(style, reply), timestamps: reply.timestamps };
  }

  const noteTokens = (n: ChunkNote): number => estimateTokens(encodeData(n)) + 1;

  async function notesFor(
    transcript: Transcript,
    segments: readonly TranscriptSegment[],
  ): Promise<ChunkNote[]> {
    const chunks = splitIntoPromptWindows(segments, budget);
    options.onEvent?.({ type: 'map_reduce', chunks: chunks.length, tokens: transcriptTokens(segments) });
    const perChunk = await mapLimit(chunks, concurrency, async (chunk) => {
      const reply = await completeJson(
        chunkNotesMessages(transcript, chunk.segments, { index: chunk.index, count: chunks.length }),
        notesSchema,
      );
      // Notes keep times inside their own chunk, so a confused chunk cannot point elsewhere.
      return reply.notes
        .filter((n) => n.seconds >= chunk.start - 1 && n.seconds <= chunk.end + 1)
        .slice(0, 8)
        .map((n) => ({
          seconds: n.seconds,
          topic: truncateAtWord(n.topic, 80),
          point: truncateAtWord(n.point, 400),
        }));
    });
    let notes = perChunk.flat();
    // Hierarchical reduce: while the notes alone exceed the budget, merge them batch by batch.
    for (let round = 0; round < 4 && notes.reduce((s, n) => s + noteTokens(n), 0) > budget; round++) {
      const batches = batchByBudget(notes, budget, noteTokens);
      if (batches.length <= 1) break;
      const merged = await mapLimit(batches, concurrency, async (batch) => {
        const reply = await completeJson(condenseNotesMessages(transcript, batch), notesSchema);
        return reply.notes.slice(0, 8);
      });
      notes = merged.flat();
    }
    return notes;
  }

  return {
    summaryModel: options.model,
    analysisModel: options.model,

    async summarize({ transcript, style }) {
      const segments = transcript.segments
        .map((s) => ({ ...s, text: stripAnnotations(s.text) }))
        .filter((s) => s.text !== '');
      if (segments.length === 0) {
        return {
          summary: 'The transcript of this video contains no speech to summarise.',
          timestamps: [],
          model: options.model,
        };
      }
      const result =
        transcriptTokens(segments) <= budget
          ? await finalSummary(style, summaryMessages(transcript, transcript.language, segments, style))
          : await finalSummary(
              style,
              summaryFromNotesMessages(
                transcript,
                transcript.language,
                await notesFor(transcript, segments),
                style,
              ),
            );
      return {
        summary: result.summary,
        timestamps: groundTimestamps(result.timestamps, transcript.segments, transcript.duration),
        model: options.model,
      };
    },

    async analyze({ title, sample }) {
      // Cap each comment so the whole sample fits the budget (100 comments of ~350 chars at 6k).
      const perComment = Math.max(
        200,
        Math.min(1500, Math.floor((budget * 3.5) / Math.max(sample.length, 1)) - 40),
      );
      const reply = await completeJson(analysisMessages({ title }, sample, perComment), analysisSchema);
      const seen = new Set<string>();
      const themes: string[] = [];
      for (const raw of reply.themes) {
        const theme = truncateAtWord(raw, 60);
        const key = theme.toLowerCase();
        if (theme === '' || seen.has(key)) continue;
        seen.add(key);
        themes.push(theme);
        if (themes.length >= MAX_THEMES) break;
      }
      return {
        sentiment: reply.sentiment,
        themes,
        keyQuotes: verifyQuotes(reply.key_quotes, sample),
        model: options.model,
      };
    },
  };
}

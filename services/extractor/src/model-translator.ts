/**
 * Caption translation by a model, for when the platform refuses (`tlang` answers empty since late
 * 2026). Any OpenAI-compatible chat-completions endpoint, through the official `openai` client as
 * the AI service uses it (timeouts, retries with backoff on 429/5xx). The exchange, one chat
 * completion per group of segments: the user message is the JSON object
 * `{"target_language": "<code>", "segments": ["text", …]}` and the answer the JSON object
 * `{"segments": ["translated text", …]}` of the same length and order. An answer of another length
 * (or not that object) is asked again once; then the translation fails with 502 UPSTREAM_ERROR,
 * retryable, and nothing is cached or charged.
 *
 * Why here and not in the AI service: the AI service reads transcripts from this service over gRPC
 * (summaries), so this service calling it back would make the two depend on each other at start and
 * let a summary's transcript wait on a translation inside the same pair of services. The model
 * endpoint is the same configuration (OPENAI_BASE_URL, OPENAI_API_KEY, AI_MODEL).
 */
import OpenAI, { APIConnectionError, APIError } from 'openai';
import { AppError, Errors } from '@subx/errors';
import type { SegmentTranslator } from '@subx/youtube';

export interface ModelTranslatorOptions {
  /** e.g. https://api.openai.com/v1; undefined: the client's default. */
  readonly baseUrl?: string | undefined;
  readonly apiKey: string;
  readonly model: string;
  /** Per HTTP attempt. */
  readonly timeoutMs: number;
  /** Retries after the first attempt (429, 5xx, timeouts, connection errors). */
  readonly maxRetries: number;
  /** Segments per chat completion (default 100). */
  readonly groupSize?: number;
  /** Most characters of caption text per chat completion (default 12 000); a group ends before. */
  readonly groupChars?: number;
}

const SYSTEM_PROMPT =
  'You translate video captions. The user message is a JSON object {"target_language": "<language code>", ' +
  '"segments": ["text", ...]}. Answer only with the JSON object {"segments": ["translated text", ...]}: ' +
  'exactly one translated string per input segment, in the same order, never merged or split.';

/** Groups of consecutive texts, each at most `size` texts and about `chars` characters. */
export function groupTexts(texts: readonly string[], size: number, chars: number): string[][] {
  const groups: string[][] = [];
  let group: string[] = [];
  let length = 0;
  for (const text of texts) {
    if (group.length > 0 && (group.length >= size || length + text.length > chars)) {
      groups.push(group);
      group = [];
      length = 0;
    }
    group.push(text);
    length += text.length;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

/** The translated texts of one answer, or undefined when it is not `{"segments": [n strings]}`. */
function readAnswer(content: string | null | undefined, expected: number): string[] | undefined {
  if (!content) return undefined;
  const fenced = /^\s*```(?:json)?\s*([\s\S]*?)\s*```\s*$/i.exec(content);
  let value: unknown;
  try {
    value = JSON.parse(fenced ? fenced[1]! : content);
  } catch {
    return undefined;
  }
  const segments = (value as { segments?: unknown } | null)?.segments;
  if (!Array.isArray(segments) || segments.length !== expected) return undefined;
  if (!segments.every((s) => typeof s === 'string')) return undefined;
  return segments as string[];
}

function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof APIConnectionError) return Errors.serviceUnavailable('translation model', err);
  if (err instanceof APIError) {
    const status = err.status ?? 0;
    if (status === 429 || status >= 500 || status === 408)
      return Errors.serviceUnavailable('translation model', err);
    return Errors.internal(err);
  }
  return Errors.internal(err);
}

export function createModelTranslator(options: ModelTranslatorOptions): SegmentTranslator {
  const client = new OpenAI({
    apiKey: options.apiKey,
    baseURL: options.baseUrl ?? null,
    timeout: options.timeoutMs,
    maxRetries: options.maxRetries,
  });
  const size = options.groupSize ?? 100;
  const chars = options.groupChars ?? 12_000;

  async function translateGroup(
    texts: string[],
    targetLanguage: string,
    signal: AbortSignal | undefined,
  ): Promise<string[]> {
    const user = JSON.stringify({ target_language: targetLanguage, segments: texts });
    for (let attempt = 0; attempt < 2; attempt++) {
      let content: string | null | undefined;
      try {
        const completion = await client.chat.completions.create(
          {
            model: options.model,
            temperature: 0,
            response_format: { type: 'json_object' },
            messages: [
              { role: 'system', content: SYSTEM_PROMPT },
              { role: 'user', content: user },
            ],
          },
          signal ? { signal } : undefined,
        );
        content = completion.choices[0]?.message?.content;
      } catch (err) {
        throw toAppError(err);
      }
      const translated = readAnswer(content, texts.length);
      if (translated) return translated;
    }
    throw Errors.upstreamError(
      `The translation model did not answer ${texts.length} segments in order, twice; retry later.`,
    );
  }

  return {
    async translate(texts, targetLanguage, signal) {
      const out: string[] = [];
      for (const group of groupTexts(texts, size, chars))
        out.push(...(await translateGroup(group, targetLanguage, signal)));
      return out;
    },
  };
}

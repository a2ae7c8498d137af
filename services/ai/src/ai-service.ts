/**
 * The AI service's use cases: summaries and comment analysis with their 24-hour caches.
 *
 * Caching (decisions.md, "Summary charging"): one entry per (video, style[, language]) and per
 * (video, sample size), keyed also by the engine so that switching engines does not serve the other
 * engine's answers. Each entry has a `generated_at` that identifies it; the gateway charges a user
 * once per entry, so this service reports `cached` and `generated_at` truthfully and never charges.
 */
import { aiV1 } from '@subx/contracts';
import { Errors } from '@subx/errors';
import type { Clock, KeyValueStore } from '@subx/ports';
import { z } from 'zod';
import { createEntryCache } from './cache.ts';
import { sampleComments } from './domain/sampling.ts';
import {
  DEFAULT_SAMPLE_SIZE,
  MAX_KEY_QUOTES,
  MAX_SAMPLE_SIZE,
  MAX_THEMES,
  MIN_COMMENTS_FOR_ANALYSIS,
  MIN_SAMPLE_SIZE,
  MIN_TIMESTAMP_VIDEO_SECONDS,
  SENTIMENTS,
} from './domain/types.ts';
import type { CommentItem, SentimentLabel, SummaryStyle } from './domain/types.ts';
import type { AiEngine } from './model/engine.ts';
import type { CommentSource, TranscriptSource } from './sources.ts';

export const DAY_MS = 24 * 60 * 60 * 1000;

const summaryEntrySchema = z.object({
  summary: z.string(),
  timestamps: z.array(z.object({ seconds: z.number(), topic: z.string(), text: z.string() })),
  title: z.string(),
  duration: z.number(),
  channel: z.string(),
  model: z.string(),
  generatedAt: z.string(),
});
type SummaryEntry = z.infer<typeof summaryEntrySchema>;

const analysisEntrySchema = z.object({
  sentiment: z.enum(SENTIMENTS),
  themes: z.array(z.string()),
  keyQuotes: z.array(z.object({ text: z.string(), author: z.string() })),
  sampleSize: z.number(),
  totalComments: z.number(),
  model: z.string(),
  generatedAt: z.string(),
});
type AnalysisEntry = z.infer<typeof analysisEntrySchema>;

const SENTIMENT_TO_PROTO: Record<SentimentLabel, aiV1.Sentiment> = {
  positive: aiV1.Sentiment.SENTIMENT_POSITIVE,
  negative: aiV1.Sentiment.SENTIMENT_NEGATIVE,
  mixed: aiV1.Sentiment.SENTIMENT_MIXED,
};

export interface AiServiceDeps {
  readonly engine: AiEngine;
  readonly transcripts: TranscriptSource;
  readonly comments: CommentSource;
  readonly cache: KeyValueStore;
  readonly clock: Clock;
  readonly summaryTtlMs?: number;
  readonly analysisTtlMs?: number;
}

export interface AiService {
  summarize(request: {
    videoId: string;
    style?: SummaryStyle;
    language?: string;
  }): Promise<aiV1.SummarizeResponse>;
  analyzeComments(request: { videoId: string; sampleSize?: number }): Promise<aiV1.AnalyzeCommentsResponse>;
}

/** The comment pool we sample from: a generous slice of top comments and the newest ones. */
function topPoolSize(sampleSize: number): number {
  return Math.min(2000, Math.max(200, sampleSize * 4));
}

export function createAiService(deps: AiServiceDeps): AiService {
  const { engine, transcripts, comments, clock } = deps;
  const summaries = createEntryCache({
    kv: deps.cache,
    clock,
    prefix: 'ai:summary:v1:',
    ttlMs: deps.summaryTtlMs ?? DAY_MS,
    schema: summaryEntrySchema,
  });
  const analyses = createEntryCache({
    kv: deps.cache,
    clock,
    prefix: 'ai:analysis:v1:',
    ttlMs: deps.analysisTtlMs ?? DAY_MS,
    schema: analysisEntrySchema,
  });
  // Concurrent misses for the same entry in this process share one generation (and one entry).
  const inFlight = new Map<string, Promise<{ entry: unknown; fresh: boolean }>>();
  async function singleFlight<T>(key: string, work: () => Promise<{ entry: T; fresh: boolean }>) {
    const running = inFlight.get(key) as Promise<{ entry: T; fresh: boolean }> | undefined;
    if (running) return { ...(await running), fresh: false };
    const promise = work().finally(() => inFlight.delete(key));
    inFlight.set(key, promise);
    return promise;
  }

  const summaryResponse = (videoId: string, e: SummaryEntry, cached: boolean): aiV1.SummarizeResponse => ({
    videoId,
    summary: e.summary,
    timestamps: e.timestamps.map((t) => ({ ...t })),
    videoTitle: e.title,
    videoDuration: e.duration,
    videoChannel: e.channel,
    cached,
    model: e.model,
    generatedAt: e.generatedAt,
  });
  const analysisResponse = (
    videoId: string,
    e: AnalysisEntry,
    cached: boolean,
  ): aiV1.AnalyzeCommentsResponse => ({
    videoId,
    sentiment: SENTIMENT_TO_PROTO[e.sentiment],
    themes: [...e.themes],
    keyQuotes: e.keyQuotes.map((q) => ({ ...q })),
    sampleSize: e.sampleSize,
    totalComments: BigInt(e.totalComments),
    cached,
    model: e.model,
    generatedAt: e.generatedAt,
  });

  return {
    async summarize({ videoId, style = 'brief', language = '' }) {
      const lang = language.trim() === '' ? 'en' : language.trim();
      const key = `${engine.summaryModel}:${videoId}:${style}${lang === 'en' ? '' : `:${lang}`}`;
      const hit = await summaries.get(key);
      if (hit) return summaryResponse(videoId, hit, true);

      const { entry, fresh } = await singleFlight(`s:${key}`, async () => {
        const transcript = await transcripts.getTranscript(videoId, lang);
        const result = await engine.summarize({ transcript, style });
        const duration = transcript.duration;
        const entry: SummaryEntry = {
          summary: result.summary,
          // Defence in depth: whatever the engine did, short videos get no timestamps.
          timestamps: duration < MIN_TIMESTAMP_VIDEO_SECONDS ? [] : [...result.timestamps],
          title: transcript.title,
          duration,
          channel: transcript.channel,
          model: result.model,
          generatedAt: new Date(clock.now()).toISOString(),
        };
        const put = await summaries.putIfAbsent(key, entry);
        return { entry: put.value, fresh: put.stored };
      });
      return summaryResponse(videoId, entry, !fresh);
    },

    async analyzeComments({ videoId, sampleSize }) {
      const size = sampleSize === undefined || sampleSize === 0 ? DEFAULT_SAMPLE_SIZE : sampleSize;
      if (!Number.isInteger(size) || size < MIN_SAMPLE_SIZE || size > MAX_SAMPLE_SIZE) {
        throw Errors.invalidRequest(
          `sample_size must be an integer from ${MIN_SAMPLE_SIZE} to ${MAX_SAMPLE_SIZE}.`,
          {
            field: 'sample_size',
          },
        );
      }
      const key = `${engine.analysisModel}:${videoId}:${size}`;
      const hit = await analyses.get(key);
      if (hit) return analysisResponse(videoId, hit, true);

      const { entry, fresh } = await singleFlight(`a:${key}`, async () => {
        const [top, recent] = await Promise.all([
          comments.getComments(videoId, { max: topPoolSize(size), sort: 'top' }),
          comments.getComments(videoId, { max: size, sort: 'recent' }),
        ]);
        if (top.commentsDisabled || recent.commentsDisabled) throw Errors.commentsDisabled(videoId);
        const pool = new Map<string, CommentItem>();
        for (const c of [...top.comments, ...recent.comments]) pool.set(c.id || `${c.author}|${c.text}`, c);
        const available = [...pool.values()];
        if (available.length < MIN_COMMENTS_FOR_ANALYSIS) {
          throw Errors.notEnoughComments(videoId, available.length);
        }
        const sample = sampleComments(available, size).comments;
        const result = await engine.analyze({ videoId, title: '', language: 'en', sample });
        const entry: AnalysisEntry = {
          sentiment: result.sentiment,
          themes: result.themes.slice(0, MAX_THEMES),
          keyQuotes: result.keyQuotes
            .slice(0, MAX_KEY_QUOTES)
            .map((q) => ({ text: q.text, author: q.author })),
          sampleSize: sample.length,
          totalComments: Math.max(top.totalCount, recent.totalCount, available.length),
          model: result.model,
          generatedAt: new Date(clock.now()).toISOString(),
        };
        const put = await analyses.putIfAbsent(key, entry);
        return { entry: put.value, fresh: put.stored };
      });
      return analysisResponse(videoId, entry, !fresh);
    },
  };
}

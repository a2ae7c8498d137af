/**
 * The prices in words, from the pricing table: the `credits` of each operation in the OpenAPI
 * document, /llms.txt's price list and the MCP tools say what the table says, so none of them can
 * disagree with what is charged.
 */
import { plural } from '@subx/errors';
import { DEFAULT_PRICING, type AccessPricing } from './pricing.ts';

const credits = (n: number) => plural(n, 'credit');

/** Each paid thing, in words: what it costs and when it is free. */
export function priceList(pricing: AccessPricing = DEFAULT_PRICING): { what: string; costs: string }[] {
  const p = pricing.prices;
  const summarize = p.summarize
    .map((step) =>
      step.upToSeconds === null
        ? `${credits(step.credits)} for longer videos`
        : `${credits(step.credits)} up to ${step.upToSeconds / 60} min`,
    )
    .join(', ');
  return [
    { what: 'extract (captions)', costs: p.extract === 0 ? 'free (0 credits)' : credits(p.extract) },
    {
      what: 'transcription (`mode` auto or transcribe, Pro tier and up)',
      costs: `${credits(p.transcriptionPerMinute)} per started minute of audio transcribed (70 s = ${credits(2 * p.transcriptionPerMinute)}); nothing when captions answered or the transcription came from the cache`,
    },
    {
      what: 'translation by a model (`translate`, the platform refusing)',
      costs: `${credits(p.modelTranslation)} more; nothing when the platform translated`,
    },
    {
      what: 'embeddings (extract with `embed: true`)',
      costs: `1 credit per started ${p.embeddedChunksPerCredit} chunks embedded`,
    },
    {
      what: 'batch, playlist and job items',
      costs: `${credits(p.perSuccessfulItem)} per successful item (plus its transcription or model translation); failures are free`,
    },
    { what: 'summarize', costs: `${summarize}; 0 for a summary already paid for` },
    {
      what: 'comments',
      costs: `1 credit per started ${p.commentsPerCredits} comments returned; 0 when cached`,
    },
    { what: 'comments/analyze', costs: `${credits(p.commentsAnalyze)}; 0 when cached` },
    { what: 'search', costs: `${credits(p.search)} per page; 0 when cached` },
  ];
}

/** The `credits` line of each priced operation (the OpenAPI document's "Credits:" sentence). */
export function operationCredits(pricing: AccessPricing = DEFAULT_PRICING) {
  const p = pricing.prices;
  const list = new Map(priceList(pricing).map((entry) => [entry.what, entry.costs]));
  const extras = `with \`mode\` auto or transcribe ${credits(p.transcriptionPerMinute)} per started minute of audio transcribed, with a translation by a model ${credits(p.modelTranslation)} more`;
  const item = `${credits(p.perSuccessfulItem)} per successful item; ${extras}`;
  return {
    extract: `${p.extract === 0 ? '0 for captions' : credits(p.extract)}; ${extras}; with \`embed\` 1 per started ${p.embeddedChunksPerCredit} chunks embedded; the answer's \`credits_used\` says what was charged`,
    items: item,
    jobs: `${item}, charged as the job runs`,
    summarize: list.get('summarize')!,
    comments: list.get('comments')!,
    commentsAnalyze: list.get('comments/analyze')!,
    search: list.get('search')!,
  };
}

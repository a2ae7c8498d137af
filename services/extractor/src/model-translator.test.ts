// Caption translation by a model, against a real HTTP stand-in for an OpenAI-compatible endpoint.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '@subx/errors';
import { startFakeOpenAi } from '@subx/testing/fake-openai';
import type { FakeOpenAi, RecordedRequest } from '@subx/testing/fake-openai';
import { createModelTranslator, groupTexts } from './model-translator.ts';

let fake: FakeOpenAi;
beforeEach(async () => {
  fake = await startFakeOpenAi();
});
afterEach(async () => {
  await fake.close();
});

const translator = (groupSize = 100) =>
  createModelTranslator({
    baseUrl: fake.baseUrl,
    apiKey: 'sk-test-not-a-real-key',
    model: 'gpt-test-mini',
    timeoutMs: 5000,
    maxRetries: 0,
    groupSize,
  });
const userOf = (r: RecordedRequest) =>
  JSON.parse(r.body!.messages!.find((m) => m.role === 'user')!.content) as {
    target_language: string;
    segments: string[];
  };

describe('translation by an OpenAI-compatible model', () => {
  it('sends {target_language, segments} and reads {segments} of the same length and order', async () => {
    fake.enqueue({ json: { segments: ['Bonjour', 'le monde'] } });
    const out = await translator().translate(['Hello', 'world'], 'fr');
    expect(out).toEqual(['Bonjour', 'le monde']);
    expect(fake.requests).toHaveLength(1);
    const req = fake.requests[0]!;
    expect(req.path).toBe('/v1/chat/completions');
    expect(req.body!.model).toBe('gpt-test-mini');
    expect(req.body!.response_format).toEqual({ type: 'json_object' });
    expect(userOf(req)).toEqual({ target_language: 'fr', segments: ['Hello', 'world'] });
  });

  it('one chat completion per group of segments, answers joined in order', async () => {
    fake.enqueue({ json: { segments: ['un', 'deux'] } }, { json: { segments: ['trois'] } });
    expect(await translator(2).translate(['one', 'two', 'three'], 'fr')).toEqual(['un', 'deux', 'trois']);
    expect(fake.requests.map((r) => userOf(r).segments)).toEqual([['one', 'two'], ['three']]);
  });

  it('an answer of the wrong length is asked again once', async () => {
    fake.enqueue(
      { json: { segments: ['Bonjour le monde'] } },
      { json: { segments: ['Bonjour', 'le monde'] } },
    );
    expect(await translator().translate(['Hello', 'world'], 'fr')).toEqual(['Bonjour', 'le monde']);
    expect(fake.requests).toHaveLength(2);
  });

  it('twice wrong (length, or not the object) is a retryable UPSTREAM_ERROR', async () => {
    fake.enqueue({ json: { segments: ['Bonjour le monde'] } }, { content: 'Bonjour, le monde' });
    const err = await translator()
      .translate(['Hello', 'world'], 'fr')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true });
    expect(fake.requests).toHaveLength(2);
  });

  it('a model endpoint that is down is SERVICE_UNAVAILABLE', async () => {
    fake.enqueue({ status: 503 });
    await expect(translator().translate(['Hello'], 'fr')).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
    });
  });

  it('groups end at the size or before the character budget', () => {
    expect(groupTexts(['aa', 'bb', 'cc'], 2, 100)).toEqual([['aa', 'bb'], ['cc']]);
    expect(groupTexts(['aaaa', 'bbbb', 'c'], 10, 5)).toEqual([['aaaa'], ['bbbb', 'c']]);
    expect(groupTexts([], 2, 5)).toEqual([]);
  });
});

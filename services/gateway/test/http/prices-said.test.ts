/**
 * What a call costs is said from the one pricing table: /llms.txt's price list (the deployment's
 * table), the OpenAPI document's "Credits:" sentences, and the answers' `credits_used`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_PRICING } from '@subx/credits';
import { buildTestGateway, type TestGateway } from './support.ts';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.app.close();
  gw = undefined;
});

describe('prices in words', () => {
  it('/llms.txt names transcription, model translation and embeddings with the table’s prices', async () => {
    const pricing = {
      ...DEFAULT_PRICING,
      prices: { ...DEFAULT_PRICING.prices, transcriptionPerMinute: 3, modelTranslation: 5 },
    };
    gw = await buildTestGateway({ deps: { pricing } });
    const text = (await gw.app.inject({ method: 'GET', url: '/llms.txt' })).body;
    const credits = text.split('## Credits')[1] ?? '';
    expect(credits).toContain('extract (captions): free (0 credits).');
    expect(credits).toMatch(/transcription .*: 3 credits per started minute of audio transcribed/);
    expect(credits).toMatch(/translation by a model .*: 5 credits more/);
    expect(credits).toMatch(/embeddings .*: 1 credit per started 100 chunks embedded/);
    expect(text).toContain('`credits_used`');
    expect(text).not.toMatch(/POST \/api\/v1\/extract: [^\n]*credits: none/);
  });

  it('the OpenAPI document prices extract and batch from the table', async () => {
    gw = await buildTestGateway();
    const doc = (await gw.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const extract = doc.paths['/api/v1/extract'].post.description as string;
    expect(extract).toContain(
      `Credits: 0 for captions; with \`mode\` auto or transcribe ${DEFAULT_PRICING.prices.transcriptionPerMinute} credit per started minute of audio transcribed`,
    );
    expect(doc.paths['/api/v1/batch'].post.description).toContain('Credits: 1 credit per successful item');
    const extractAnswer =
      doc.paths['/api/v1/extract'].post.responses['200'].content['application/json'].schema;
    const props =
      extractAnswer.properties ?? doc.components.schemas[extractAnswer.$ref?.split('/').pop()]?.properties;
    expect(props).toHaveProperty('credits_used');
  });
});

/**
 * The speech engine's image in the stack (compose profile `speech`, the extractor's
 * TRANSCRIBE_BASE_URL at it): healthy by its own HEALTHCHECK, running as uid 1000 on a read-only
 * root, transcribing the demo's captionless video through the public API within 15% word error
 * rate, and counting what it heard in its metrics.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { wordErrorRate } from '@subx/testing/speech';
import { api, containersOf, docker, health, metricSum, root } from './stack.ts';

/** /metrics of the speech container, read from inside it with its own Python (no node there). */
async function speechMetrics(container: string): Promise<string> {
  return docker([
    'exec',
    container,
    '/opt/speech/venv/bin/python',
    '-c',
    "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen('http://127.0.0.1:9464/metrics').read().decode())",
  ]);
}

describe('the speech engine image', () => {
  it('is healthy by its image HEALTHCHECK, as uid 1000 on a read-only root', async () => {
    const [id] = await containersOf('speech');
    expect(id, 'speech is not running').toBeDefined();
    const image = (await docker(['inspect', '-f', '{{.Config.Image}}', id!])).trim();
    expect(
      (await docker(['image', 'inspect', '-f', '{{json .Config.Healthcheck.Test}}', image])).trim(),
    ).toContain('/health/ready');
    expect(await health(id!)).toBe('healthy');
    expect((await docker(['exec', id!, 'id', '-u'])).trim()).toBe('1000');
    expect((await docker(['inspect', '-f', '{{.HostConfig.ReadonlyRootfs}}', id!])).trim()).toBe('true');
  });

  it('transcribes synthSpeech through the API (mode auto) and counts the audio it heard', async () => {
    const [id] = await containersOf('speech');
    const before = metricSum(await speechMetrics(id!), 'subx_speech_voiced_seconds_total');
    const res = await api('/api/v1/extract', {
      url: 'https://youtu.be/synthSpeech',
      mode: 'auto',
      force_refresh: true,
    });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(res.json).toMatchObject({ source: 'audio', subtitle_type: 'transcribed', language: 'en' });
    const heard = (res.json.subtitles as { text: string }[]).map((s) => s.text).join(' ');
    const spoken = readFileSync(join(root, 'packages/testing/audio/speech.txt'), 'utf8');
    expect(wordErrorRate(spoken, heard), heard).toBeLessThanOrEqual(0.15);
    const after = await speechMetrics(id!);
    expect(metricSum(after, 'subx_speech_voiced_seconds_total') - before).toBeGreaterThan(60);
    expect(metricSum(after, 'subx_speech_model_info', { model: 'whisper-tiny.en' })).toBe(1);
  }, 180_000);
});

/**
 * Speech-to-text, as the extractor's transcription client sees it.
 * Names follow Prometheus conventions (`_total` counters, `_seconds` units), made with service-kit's
 * registry like every metric; the catalogue is in packages/service-kit/README.md, the alerts that read them in deploy/helm/subx/templates/prometheusrule.yaml.
 */
import { counter, histogram } from '@subx/service-kit';

/**
 * Speech-to-text (the extractor's TRANSCRIBE_*): seconds of audio transcribed, the model's time
 * per transcription, and failures by reason (the error code: TRANSCRIPTION_FAILED, NO_SPEECH, ...).
 */
export function transcriptionMetrics(): {
  transcribed(audioSeconds: number, modelSeconds: number): void;
  failed(reason: string): void;
} {
  const audio = counter(
    'subx_transcription_audio_seconds_total',
    'Seconds of audio transcribed by the speech-to-text model (cache hits not counted).',
    [],
  );
  const model = histogram(
    'subx_transcription_model_seconds',
    'Time the speech-to-text model took per transcription.',
    [],
    [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300],
  );
  const failures = counter('subx_transcription_failures_total', 'Transcriptions that failed, by reason.', [
    'reason',
  ]);
  return {
    transcribed: (audioSeconds, modelSeconds) => {
      audio.inc(audioSeconds);
      model.observe(modelSeconds);
    },
    failed: (reason) => failures.inc({ reason }),
  };
}

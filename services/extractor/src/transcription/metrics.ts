/**
 * Speech-to-text, as the extractor's transcription client sees it.
 * Names follow Prometheus conventions (`_total` counters, `_seconds` units), made with service-kit's
 * registry like every metric; the catalogue is in packages/service-kit/README.md, the alerts that read them in deploy/helm/subx/templates/prometheusrule.yaml.
 */
import { counter, gauge, histogram } from '@subx/service-kit';

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

/** The transcriptions of this process now, as AudioTranscriber counts them. */
export interface TranscriptionQueue {
  /** Holding a slot: from the first audio byte downloaded to the model's last answer. */
  readonly inFlight: number;
  /** Waiting for a slot. */
  readonly waiting: number;
}

let queueSource: (() => TranscriptionQueue) | undefined;

/**
 * The transcriptions queued and running, read at scrape time: what an autoscaler of the speech
 * engine reads (the chart's KEDA query). They are counted here, where the work starts, because an
 * engine scaled to zero replicas exports nothing that could bring it back. Returns the unregister.
 */
export function registerTranscriptionQueue(source: () => TranscriptionQueue): () => void {
  queueSource = source;
  gauge(
    'subx_transcription_in_flight',
    "Transcriptions in progress: from the first audio byte downloaded to the model's last answer.",
    [],
    function () {
      this.set(queueSource?.().inFlight ?? 0);
    },
  );
  gauge('subx_transcription_waiting', 'Transcriptions waiting for a turn.', [], function () {
    this.set(queueSource?.().waiting ?? 0);
  });
  return () => {
    if (queueSource === source) queueSource = undefined;
  };
}

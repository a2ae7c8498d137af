"""The engine's Prometheus metrics, in the text exposition format (no client library needed).

subx_speech_transcriptions_in_flight      gauge    transcriptions the model is working on
subx_speech_transcriptions_queued         gauge    admitted requests waiting for a free worker
subx_speech_transcriptions_total{outcome} counter  ok | no_speech | invalid | rejected | error
subx_speech_audio_seconds_total           counter  seconds of audio decoded
subx_speech_voiced_seconds_total          counter  seconds of it VAD found to be speech (sent to the model)
subx_speech_transcription_seconds         histogram wall time from a free worker to the answer
subx_speech_model_info{model,multilingual} gauge   1, with the loaded model's id
subx_speech_draining                      gauge    1 after SIGTERM, while in-flight work finishes
"""

from __future__ import annotations

import threading

OUTCOMES = ("ok", "no_speech", "invalid", "rejected", "error")
BUCKETS = (0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600)


class Metrics:
    def __init__(self, model_id: str, multilingual: bool):
        self._lock = threading.Lock()
        self.model_id = model_id
        self.multilingual = multilingual
        self.in_flight = 0
        self.queued = 0
        self.draining = False
        self.outcomes = dict.fromkeys(OUTCOMES, 0)
        self.audio_seconds = 0.0
        self.voiced_seconds = 0.0
        self.buckets = [0] * len(BUCKETS)
        self.seconds_sum = 0.0
        self.seconds_count = 0

    def add(self, name: str, delta: int) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + delta)

    def outcome(self, outcome: str) -> None:
        with self._lock:
            self.outcomes[outcome] += 1

    def transcribed(self, audio_s: float, voiced_s: float, wall_s: float) -> None:
        with self._lock:
            self.audio_seconds += audio_s
            self.voiced_seconds += voiced_s
            self.seconds_sum += wall_s
            self.seconds_count += 1
            for i, bound in enumerate(BUCKETS):
                if wall_s <= bound:
                    self.buckets[i] += 1

    def render(self) -> bytes:
        with self._lock:
            model = self.model_id.replace("\\", "\\\\").replace('"', '\\"')
            lines = [
                "# HELP subx_speech_transcriptions_in_flight Transcriptions the model is working on.",
                "# TYPE subx_speech_transcriptions_in_flight gauge",
                f"subx_speech_transcriptions_in_flight {self.in_flight}",
                "# HELP subx_speech_transcriptions_queued Admitted requests waiting for a free worker.",
                "# TYPE subx_speech_transcriptions_queued gauge",
                f"subx_speech_transcriptions_queued {self.queued}",
                "# HELP subx_speech_transcriptions_total Transcription requests answered, by outcome.",
                "# TYPE subx_speech_transcriptions_total counter",
                *(f'subx_speech_transcriptions_total{{outcome="{o}"}} {n}' for o, n in self.outcomes.items()),
                "# HELP subx_speech_audio_seconds_total Seconds of audio decoded.",
                "# TYPE subx_speech_audio_seconds_total counter",
                f"subx_speech_audio_seconds_total {self.audio_seconds:.3f}",
                "# HELP subx_speech_voiced_seconds_total Seconds of audio the VAD found to be speech.",
                "# TYPE subx_speech_voiced_seconds_total counter",
                f"subx_speech_voiced_seconds_total {self.voiced_seconds:.3f}",
                "# HELP subx_speech_transcription_seconds Time from a free worker to the answer.",
                "# TYPE subx_speech_transcription_seconds histogram",
                *(f'subx_speech_transcription_seconds_bucket{{le="{b}"}} {n}' for b, n in zip(BUCKETS, self.buckets)),
                f'subx_speech_transcription_seconds_bucket{{le="+Inf"}} {self.seconds_count}',
                f"subx_speech_transcription_seconds_sum {self.seconds_sum:.3f}",
                f"subx_speech_transcription_seconds_count {self.seconds_count}",
                "# HELP subx_speech_model_info The loaded model.",
                "# TYPE subx_speech_model_info gauge",
                f'subx_speech_model_info{{model="{model}",multilingual="{str(self.multilingual).lower()}"}} 1',
                "# HELP subx_speech_draining 1 after SIGTERM while in-flight work finishes.",
                "# TYPE subx_speech_draining gauge",
                f"subx_speech_draining {int(self.draining)}",
            ]
        return ("\n".join(lines) + "\n").encode()

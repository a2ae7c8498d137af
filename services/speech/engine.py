"""Audio in, timed words and segments out: PyAV decodes, Silero VAD finds the speech, Whisper
(faster-whisper on CTranslate2) transcribes only that, and what Whisper is known to invent on
non-speech is taken out before anyone sees it.

Memory stays bounded whatever the audio's length: the upload is decoded into windows of at most
WINDOW_S seconds of 16 kHz mono (float32: 38 MB for 10 minutes); a window ends where no speech is
going on (a speech region still open at its end is carried into the next window, or the window
ends at its quietest moment near the end), so no word is cut in two.
"""

from __future__ import annotations

import io
import re
import zlib
from dataclasses import dataclass, field

import numpy as np

SAMPLE_RATE = 16000
WINDOW_S = 600.0
# A speech region that reaches a window's last CARRY_MARGIN_S seconds is carried into the next
# window, unless it already fills more than half the window: then the window ends at the quietest
# 100 ms of its last CUT_SEARCH_S seconds (a pause between words), and the rest is carried.
CARRY_MARGIN_S = 1.0
CUT_SEARCH_S = 30

# Silero VAD: speech regions shorter than 250 ms are clicks; 500 ms of silence ends a region;
# 200 ms of padding each side keeps the first and last phonemes.
VAD = dict(threshold=0.5, min_speech_duration_ms=250, min_silence_duration_ms=500, speech_pad_ms=200)

# Whisper's own quality thresholds (the values of OpenAI's reference decoder).
COMPRESSION_RATIO_MAX = 2.4
LOGPROB_MIN = -1.0
NO_SPEECH_MAX = 0.6
# What Whisper says over noise it cannot read: dropped when it is all a segment says and the
# segment is not confidently speech.
STOCK_PHRASES = {
    "thank you", "thanks for watching", "thank you for watching", "thank you very much", "you",
    "bye", "bye bye", "subscribe", "please subscribe", "like and subscribe", "music", "applause",
    "laughter", "silence", "the end", "so", "oh", "hmm",
}

LANGUAGE_NAMES = {
    "en": "english", "de": "german", "fr": "french", "es": "spanish", "it": "italian",
    "pt": "portuguese", "nl": "dutch", "ru": "russian", "ja": "japanese", "zh": "chinese",
    "ko": "korean", "ar": "arabic", "hi": "hindi", "tr": "turkish", "pl": "polish",
    "sv": "swedish", "uk": "ukrainian", "cs": "czech", "el": "greek", "he": "hebrew",
    "id": "indonesian", "vi": "vietnamese", "th": "thai", "da": "danish", "fi": "finnish",
    "no": "norwegian", "hu": "hungarian", "ro": "romanian",
}
LANGUAGE_CODES = {name: code for code, name in LANGUAGE_NAMES.items()}


class AudioError(Exception):
    """The upload is not audio that can be decoded (answered with 400)."""


class LanguageError(Exception):
    """A language the loaded model cannot transcribe (answered with 400)."""


@dataclass
class Word:
    word: str  # as Whisper spells it: a leading space, punctuation attached
    start: float
    end: float
    probability: float


@dataclass
class Segment:
    start: float
    end: float
    words: list
    avg_logprob: float
    no_speech_prob: float
    temperature: float

    @property
    def text(self) -> str:
        return "".join(w.word for w in self.words).strip()


@dataclass
class Transcript:
    language: str  # a code: "en"
    duration: float  # seconds of audio decoded
    speech_seconds: float  # seconds of it VAD found to be speech (0: the model was not asked)
    segments: list = field(default_factory=list)

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.segments if s.text)

    @property
    def words(self) -> list:
        return [w for s in self.segments for w in s.words]


def compression_ratio(text: str) -> float:
    data = text.encode("utf-8")
    return round(len(data) / len(zlib.compress(data)), 3) if data else 0.0


def language_code(requested: str) -> str | None:
    """'en', 'english', 'EN-us' → 'en'; '' → None (detect)."""
    value = requested.strip().lower()
    if not value:
        return None
    value = LANGUAGE_CODES.get(value, value)
    return value.split("-")[0].split("_")[0]


# ---- decoding -----------------------------------------------------------------------------------


def decode_windows(data: bytes, max_seconds: float, window_s: float = WINDOW_S):
    """Yields float32 arrays of at most window_s seconds of 16 kHz mono, in order; AudioError
    when the bytes are not decodable audio. Stops after max_seconds."""
    import av
    from faster_whisper.audio import _group_frames, _ignore_invalid_frames, _resample_frames

    window = int(window_s * SAMPLE_RATE)
    limit = int(max_seconds * SAMPLE_RATE)
    seen = 0
    pending: list = []
    pending_len = 0
    try:
        container = av.open(io.BytesIO(data), mode="r", metadata_errors="ignore")
    except (av.error.FFmpegError, ValueError, OSError) as e:
        raise AudioError(f"could not decode the audio: {e}") from None
    try:
        if not container.streams.audio:
            raise AudioError("the file has no audio stream")
        resampler = av.audio.resampler.AudioResampler(format="s16", layout="mono", rate=SAMPLE_RATE)
        frames = _resample_frames(_group_frames(_ignore_invalid_frames(container.decode(audio=0)), 64000), resampler)
        for frame in frames:
            samples = frame.to_ndarray().reshape(-1)
            if seen + len(samples) > limit:
                samples = samples[: limit - seen]
            seen += len(samples)
            pending.append(samples)
            pending_len += len(samples)
            while pending_len >= window:
                joined = np.concatenate(pending)
                yield joined[:window].astype(np.float32) / 32768.0
                rest = joined[window:]
                pending, pending_len = [rest], len(rest)
            if seen >= limit:
                break
    except av.error.FFmpegError as e:
        raise AudioError(f"could not decode the audio: {e}") from None
    finally:
        container.close()
    if seen == 0:
        raise AudioError("the file holds no audio samples")
    if pending_len:
        yield np.concatenate(pending).astype(np.float32) / 32768.0


# ---- the engine ---------------------------------------------------------------------------------


class Engine:
    """One loaded Whisper model and the Silero VAD; transcribe() may run on `workers` threads."""

    def __init__(self, model_dir: str, cpu_threads: int, workers: int, device: str = "cpu",
                 compute_type: str = "int8", window_s: float = WINDOW_S):
        import onnxruntime
        from faster_whisper import WhisperModel
        from faster_whisper.vad import VadOptions, get_vad_model

        # ONNX Runtime's usage reports: ORT_DISABLE_TELEMETRY=1 (server.py) keeps them from
        # starting; this turns off the events of a runtime started without it.
        onnxruntime.disable_telemetry_events()
        self.model = WhisperModel(model_dir, device=device, compute_type=compute_type,
                                  cpu_threads=cpu_threads, num_workers=workers, local_files_only=True)
        self.multilingual = bool(self.model.model.is_multilingual)
        self.vad_options = VadOptions(**VAD)
        self.window_s = window_s
        get_vad_model()  # load it now, not on the first request

    def speech_regions(self, audio: np.ndarray) -> list:
        from faster_whisper.vad import get_speech_timestamps

        return get_speech_timestamps(audio, self.vad_options, sampling_rate=SAMPLE_RATE)

    def transcribe(self, data: bytes, language: str | None, prompt: str | None, max_seconds: float) -> Transcript:
        if language and not self.multilingual and language != "en":
            raise LanguageError(f"the loaded model transcribes English only (asked: {language!r})")
        code = language or (None if self.multilingual else "en")
        transcript = Transcript(language=code or "en", duration=0.0, speech_seconds=0.0)
        offset = 0.0  # seconds of the audio before `carry`
        carry = np.zeros(0, dtype=np.float32)
        windows = decode_windows(data, max_seconds, self.window_s)
        window = next(windows, None)
        while window is not None:
            transcript.duration += len(window) / SAMPLE_RATE
            audio = np.concatenate([carry, window]) if len(carry) else window
            following = next(windows, None)
            regions = self.speech_regions(audio)
            cut = len(audio)
            if following is not None and regions:
                last = regions[-1]
                if last["end"] >= len(audio) - CARRY_MARGIN_S * SAMPLE_RATE:
                    if last["start"] > len(audio) // 2:
                        cut = last["start"]  # the whole region moves into the next window
                        regions = regions[:-1]
                    else:  # too long to move: cut it where it is quietest, between words
                        tail = min(CUT_SEARCH_S * SAMPLE_RATE, len(audio) // 4)
                        cut = quietest_point(audio, max(last["start"], len(audio) - int(tail)))
                        regions = [dict(r, end=min(r["end"], cut)) for r in regions if r["start"] < cut]
            if regions:
                segments, detected = self._transcribe_regions(audio, regions, code, prompt)
                if code is None and detected:
                    code = detected  # the first speech decides; later windows keep it
                    transcript.language = detected
                for s in segments:
                    shift_segment(s, offset)
                transcript.segments.extend(segments)
                transcript.speech_seconds += sum(r["end"] - r["start"] for r in regions) / SAMPLE_RATE
            carry = audio[cut:]
            offset += cut / SAMPLE_RATE
            window = following
        transcript.duration = round(transcript.duration, 3)
        transcript.segments = clean_segments(transcript.segments, transcript.duration)
        return transcript

    def _transcribe_regions(self, audio: np.ndarray, regions: list, language: str | None,
                            prompt: str | None) -> tuple:
        """Whisper on the speech regions only, joined; times mapped back onto `audio`."""
        from faster_whisper.vad import SpeechTimestampsMap, collect_chunks

        chunks, _ = collect_chunks(audio, regions, sampling_rate=SAMPLE_RATE)
        speech = np.concatenate(chunks)
        times = SpeechTimestampsMap(regions, SAMPLE_RATE)
        found, info = self.model.transcribe(
            speech,
            language=language,
            initial_prompt=prompt or None,
            beam_size=1,
            word_timestamps=True,
            vad_filter=False,
            condition_on_previous_text=False,
            compression_ratio_threshold=COMPRESSION_RATIO_MAX,
            log_prob_threshold=LOGPROB_MIN,
            no_speech_threshold=NO_SPEECH_MAX,
        )
        segments = []
        for s in found:
            words = []
            for w in s.words or []:
                chunk = times.get_chunk_index(w.start)
                start = times.get_original_time(w.start, chunk)
                end = max(start, times.get_original_time(w.end, chunk, is_end=True))
                words.append(Word(w.word, start, end, float(w.probability)))
            if not words:
                continue
            segments.append(Segment(words[0].start, words[-1].end, words, float(s.avg_logprob),
                                    float(s.no_speech_prob), float(s.temperature)))
        return segments, getattr(info, "language", None)


def quietest_point(audio: np.ndarray, start: int) -> int:
    """The middle of the 100 ms of audio[start:] with the least energy (a sample index)."""
    frame = SAMPLE_RATE // 10
    frames = (len(audio) - start) // frame
    if frames < 1:
        return len(audio)
    energy = np.square(audio[start : start + frames * frame].reshape(frames, frame)).sum(axis=1)
    return start + int(np.argmin(energy)) * frame + frame // 2


def shift_segment(s: Segment, offset: float) -> None:
    if offset == 0:
        return
    s.start = round(s.start + offset, 2)
    s.end = round(s.end + offset, 2)
    for w in s.words:
        w.start = round(w.start + offset, 2)
        w.end = round(w.end + offset, 2)


# ---- what Whisper invents -----------------------------------------------------------------------


def _norm(word: str) -> str:
    return re.sub(r"[^\w']+", "", word.lower())


def collapse_repeats(words: list) -> list:
    """Whisper's repetition loop ("the the the the", "I'm going to. I'm going to. I'm going to."):
    an n-gram (n = 1..8) said more than twice in a row (more than three times for one word, which
    people do say: "no, no, no") is kept once."""
    out = list(words)
    for n in range(8, 0, -1):
        least = 4 if n == 1 else 3
        i = 0
        result: list = []
        while i < len(out):
            gram = [_norm(w.word) for w in out[i : i + n]]
            if len(gram) < n or not any(gram):
                result.append(out[i])
                i += 1
                continue
            repeats = 1
            while [_norm(w.word) for w in out[i + repeats * n : i + (repeats + 1) * n]] == gram:
                repeats += 1
            if repeats >= least:
                result.extend(out[i : i + n])
                i += repeats * n
            else:
                result.append(out[i])
                i += 1
        out = result
    return out


def clean_segments(segments: list, duration: float) -> list:
    """Removes what does not come from speech: segments Whisper itself doubts (no speech and a low
    log probability), stock phrases on doubtful audio, repetition loops within and across
    segments, text that still compresses like a loop; clamps times into the audio, in order."""
    kept: list = []
    for s in segments:
        if s.no_speech_prob > NO_SPEECH_MAX and s.avg_logprob < LOGPROB_MIN:
            continue
        if _norm(s.text.replace(" ", "")) in {p.replace(" ", "") for p in STOCK_PHRASES} and (
            s.avg_logprob < -0.5 or s.no_speech_prob > 0.3
        ):
            continue
        kept.append(s)
    words = collapse_repeats([w for s in kept for w in s.words])
    survivors = {id(w) for w in words}
    cleaned: list = []
    floor = 0.0  # times never go back: each word starts at or after the one before
    previous_text = None
    for s in kept:
        s.words = [w for w in s.words if id(w) in survivors]
        if not s.words or not _norm(s.text):
            continue
        if compression_ratio(s.text) > COMPRESSION_RATIO_MAX:
            continue
        if previous_text is not None and _norm(s.text) == previous_text and s.avg_logprob < -0.5:
            continue  # the same line again, not confidently heard: a loop across segments
        for w in s.words:
            w.start = min(max(w.start, floor), duration)
            w.end = min(max(w.end, w.start), duration)
            floor = w.start
        s.start = s.words[0].start
        s.end = max(s.words[-1].end, s.start)
        previous_text = _norm(s.text)
        cleaned.append(s)
    return cleaned

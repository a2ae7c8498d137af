"""The five response formats of OpenAI's /v1/audio/transcriptions, from an engine.Transcript."""

from __future__ import annotations

import json

from engine import LANGUAGE_NAMES, Transcript, compression_ratio

RESPONSE_FORMATS = ("json", "text", "verbose_json", "srt", "vtt")


def verbose(t: Transcript, with_words: bool) -> dict:
    """OpenAI's verbose_json: `segments` always (OpenAI leaves them out when only words are asked
    for; a client that reads segments keeps working here), `words` when asked."""
    out = {
        "task": "transcribe",
        "language": LANGUAGE_NAMES.get(t.language, t.language),
        "duration": t.duration,
        "text": t.text,
    }
    out["segments"] = [
        {
            "id": i,
            "seek": int(s.start * 100),
            "start": round(s.start, 2),
            "end": round(s.end, 2),
            "text": " " + s.text,
            "tokens": [],
            "temperature": s.temperature,
            "avg_logprob": round(s.avg_logprob, 4),
            "compression_ratio": compression_ratio(s.text),
            "no_speech_prob": round(s.no_speech_prob, 4),
        }
        for i, s in enumerate(t.segments)
    ]
    if with_words:
        out["words"] = [{"word": w.word.strip(), "start": w.start, "end": w.end} for w in t.words]
    return out


def _stamp(seconds: float, sep: str) -> str:
    ms = int(round(seconds * 1000))
    h, ms = divmod(ms, 3_600_000)
    m, ms = divmod(ms, 60_000)
    s, ms = divmod(ms, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}{sep}{ms:03d}"


def _cue_text(text: str, fmt: str) -> str:
    # A cue's text may not hold the arrow that separates its times (WebVTT); nor may SRT's.
    return text.replace("-->", "--&gt;" if fmt == "vtt" else "->")


def render(t: Transcript, fmt: str, granularities: set) -> tuple:
    """(body bytes, content type) for FMT (json, text, verbose_json, srt or vtt).

    `granularities` is what `timestamp_granularities[]` asked for: "word" adds `words`."""
    if fmt == "json":
        return json.dumps({"text": t.text}).encode(), "application/json"
    if fmt == "verbose_json":
        return json.dumps(verbose(t, "word" in granularities)).encode(), "application/json"
    if fmt == "text":
        return (t.text + "\n").encode(), "text/plain; charset=utf-8"
    lines = ["WEBVTT", ""] if fmt == "vtt" else []
    sep = "." if fmt == "vtt" else ","
    for i, s in enumerate(t.segments):
        if fmt == "srt":
            lines.append(str(i + 1))
        lines += [f"{_stamp(s.start, sep)} --> {_stamp(s.end, sep)}", _cue_text(s.text, fmt), ""]
    return "\n".join(lines).encode(), "text/plain; charset=utf-8"

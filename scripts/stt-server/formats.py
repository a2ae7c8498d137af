"""The five response formats of OpenAI's /v1/audio/transcriptions, from a recognise.Transcript."""

import json

from recognise import Transcript, compression_ratio


def _avg_logprob(words) -> float:
    if not words:
        return 0.0
    return round(max(-5.0, sum(w.logprob for w in words) / len(words)), 4)


def verbose(t: Transcript, with_words: bool) -> dict:
    segments = []
    for i, s in enumerate(t.segments):
        segments.append({
            "id": i,
            "seek": int(s.start * 100),
            "start": round(s.start, 2),
            "end": round(s.end, 2),
            "text": " " + s.text,
            "tokens": [],
            "temperature": 0.0,
            "avg_logprob": _avg_logprob(s.words),
            "compression_ratio": compression_ratio(s.text),
            "no_speech_prob": 0.0,
        })
    out = {"task": "transcribe", "language": "english", "duration": t.duration, "text": t.text,
           "segments": segments}
    if with_words:
        out["words"] = [{"word": w.word, "start": w.start, "end": w.end} for w in t.words]
    return out


def _stamp(seconds: float, sep: str) -> str:
    ms = int(round(seconds * 1000))
    h, ms = divmod(ms, 3_600_000)
    m, ms = divmod(ms, 60_000)
    s, ms = divmod(ms, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}{sep}{ms:03d}"


def render(t: Transcript, fmt: str, with_words: bool = False) -> tuple:
    """(body bytes, content type) for FMT (json, text, verbose_json, srt or vtt)."""
    if fmt == "json":
        return json.dumps({"text": t.text}).encode(), "application/json"
    if fmt == "verbose_json":
        return json.dumps(verbose(t, with_words)).encode(), "application/json"
    if fmt == "text":
        return (t.text + "\n").encode(), "text/plain; charset=utf-8"
    lines = ["WEBVTT", ""] if fmt == "vtt" else []
    sep = "." if fmt == "vtt" else ","
    for i, s in enumerate(t.segments):
        if fmt == "srt":
            lines.append(str(i + 1))
        lines += [f"{_stamp(s.start, sep)} --> {_stamp(s.end, sep)}", s.text, ""]
    return "\n".join(lines).encode(), "text/plain; charset=utf-8"

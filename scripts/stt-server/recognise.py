"""Audio in, timed words and segments out: Debian's ffmpeg decodes, PocketSphinx recognises.

Memory stays bounded whatever the audio's length: ffmpeg's 16 kHz mono PCM is read 100 ms at a
time and decoded in chunks of at most CHUNK_S seconds (about 0.8 MB), each cut at the quietest
100 ms of its last CUT_WINDOW_S seconds so that a cut rarely splits a word; each chunk is decoded
as one utterance and its word timings are offset by where it starts.
"""

import os
import subprocess
import threading
from array import array
import zlib
from dataclasses import dataclass, field

SAMPLE_RATE = 16000
CHUNK_S = 25.0
CUT_WINDOW_S = 8.0
# Words closer than this stay in one segment; a longer pause starts a new one.
PAUSE_S = 0.35
# A segment is closed after this many seconds even without a pause.
MAX_SEGMENT_S = 6.0


class AudioError(Exception):
    """The upload is not audio ffmpeg can decode (answered with 400)."""


@dataclass
class Word:
    word: str
    start: float
    end: float
    logprob: float


@dataclass
class Segment:
    start: float
    end: float
    words: list = field(default_factory=list)

    @property
    def text(self) -> str:
        return " ".join(w.word for w in self.words)


@dataclass
class Transcript:
    duration: float
    words: list
    segments: list

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.segments)


def _clean(word: str) -> str | None:
    """'<s>', '<sil>', '[NOISE]' and the like are not words; 'two(2)' is the word 'two'."""
    if not word or word[0] in "<[" or word in ("++NOISE++",):
        return None
    paren = word.find("(")
    return word[:paren] if paren > 0 else word


class Recogniser:
    """A small pool of PocketSphinx decoders (loading the model takes about a second)."""

    def __init__(self, size: int):
        from pocketsphinx import Decoder  # imported here so `--help` works without the venv

        self._decoder = Decoder
        self._free: list = []
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(size)

    def acquire(self, timeout: float):
        if not self._slots.acquire(timeout=timeout):
            return None
        with self._lock:
            if self._free:
                return self._free.pop()
        try:
            return self._decoder(samprate=SAMPLE_RATE, loglevel="FATAL")
        except BaseException:
            self._slots.release()
            raise

    def release(self, decoder) -> None:
        with self._lock:
            self._free.append(decoder)
        self._slots.release()


def _utterance_words(decoder, offset: float) -> list:
    frate = int(decoder.config["frate"])
    logmath = decoder.get_logmath()
    words = []
    for seg in decoder.seg():
        text = _clean(seg.word)
        if text is None:
            continue
        start = offset + seg.start_frame / frate
        end = offset + (seg.end_frame + 1) / frate
        words.append(Word(text, round(start, 2), round(end, 2), logmath.log_to_ln(seg.prob)))
    return words


def _quietest_cut(pcm: bytearray) -> int:
    """Byte offset of the quietest 100 ms in the last CUT_WINDOW_S of PCM: where to end a chunk."""
    step = SAMPLE_RATE // 10
    samples = array("h")
    samples.frombytes(bytes(pcm[: len(pcm) - len(pcm) % 2]))
    first = max(0, len(samples) - int(CUT_WINDOW_S * SAMPLE_RATE))
    best, best_at = None, len(samples)
    for at in range(first, len(samples) - step + 1, step):
        energy = sum(x * x for x in samples[at : at + step])
        if best is None or energy < best:
            best, best_at = energy, at + step // 2
    return best_at * 2


def _decode(decoder, pcm: bytes, offset: float) -> list:
    """One chunk as one utterance: whole-utterance decoding normalises the cepstra over all of it
    (live decoding adapts as it goes and misses the first words)."""
    decoder.start_utt()
    decoder.process_raw(pcm, False, True)
    decoder.end_utt()
    return _utterance_words(decoder, offset)


def transcribe_file(path: str, decoder, max_seconds: float, timeout_s: float) -> Transcript:
    """Decode PATH with ffmpeg and recognise it; AudioError when it is not decodable audio."""
    cmd = [
        os.environ.get("STT_FFMPEG", "/usr/bin/ffmpeg"),
        "-nostdin", "-v", "error", "-i", path, "-vn", "-ac", "1", "-ar", str(SAMPLE_RATE),
        "-t", str(max_seconds), "-f", "s16le", "-",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    killer = threading.Timer(timeout_s, proc.kill)
    killer.start()
    words: list = []
    total = 0
    pending = bytearray()  # audio not decoded yet: at most CHUNK_S + a read
    read_bytes = 2 * SAMPLE_RATE // 10  # 100 ms
    offset = 0.0  # seconds of audio decoded so far
    try:
        assert proc.stdout is not None
        while True:
            data = proc.stdout.read(read_bytes)
            if data:
                total += len(data)
                pending += data
            if len(pending) >= CHUNK_S * 2 * SAMPLE_RATE or (not data and pending):
                cut = len(pending) if not data else _quietest_cut(pending)
                words.extend(_decode(decoder, bytes(pending[:cut]), offset))
                offset += cut / 2 / SAMPLE_RATE
                del pending[:cut]
            if not data and not pending:
                break
        err = proc.stderr.read(4096).decode("utf-8", "replace") if proc.stderr else ""
        rc = proc.wait(timeout=10)
    finally:
        killer.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
    if rc != 0 or total == 0:
        first = err.strip().splitlines()[0] if err.strip() else f"ffmpeg exited with {rc}"
        first = first.replace(path + ": ", "").replace(path, "the upload")
        raise AudioError(f"could not decode the audio: {first[:200]}")
    duration = round(total / 2 / SAMPLE_RATE, 3)
    for w in words:  # the endpointer's region start is an estimate: keep every time in the audio
        w.start = min(max(w.start, 0.0), duration)
        w.end = min(max(w.end, w.start), duration)
    return Transcript(duration, words, group_segments(words))


def group_segments(words: list) -> list:
    segments: list = []
    for w in words:
        cur = segments[-1] if segments else None
        if cur is None or w.start - cur.end > PAUSE_S or w.end - cur.start > MAX_SEGMENT_S:
            start = max(w.start, cur.end if cur else 0.0)
            segments.append(Segment(start, max(w.end, start), [w]))
        else:
            cur.words.append(w)
            cur.end = max(cur.end, w.end)
    return segments


def compression_ratio(text: str) -> float:
    data = text.encode("utf-8")
    return round(len(data) / len(zlib.compress(data)), 3) if data else 0.0

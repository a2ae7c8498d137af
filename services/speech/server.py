"""subx speech: an OpenAI-compatible speech-to-text server on faster-whisper, offline.

    python server.py [PORT]        # PORT from argv, else STT_PORT, else 0 (a free port)

Prints `listening on http://HOST:PORT` on stdout once the model is loaded and connections are
accepted. Settings are environment variables (settings.py; README.md has the table). SIGTERM or
SIGINT: readiness turns 503, new transcriptions are refused with 503, the ones admitted finish
(within STT_SHUTDOWN_TIMEOUT_S), then the process exits 0.
"""

from __future__ import annotations

import hmac
import json
import os
import signal
import socket
import sys
import threading
import time
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# The engine contacts no host: nothing is fetched from a model hub, and ONNX Runtime (Silero VAD's
# runtime), whose Linux wheels report usage to Microsoft from the first session on, is told not to
# before it is loaded (the variable must be set before its environment exists).
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ["ORT_DISABLE_TELEMETRY"] = "1"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import formats  # noqa: E402
from engine import AudioError, Engine, LanguageError, language_code  # noqa: E402
from metrics import Metrics  # noqa: E402
from settings import Settings, load_settings  # noqa: E402

# A refused upload is read and thrown away (so that the client sees the answer) up to this size.
DRAIN_LIMIT = 64 * 1024 * 1024
GRANULARITIES = ("segment", "word")
TRANSCRIBE_PATHS = ("/v1/audio/transcriptions", "/audio/transcriptions")
QUIET_PATHS = ("/health", "/health/live", "/health/ready", "/metrics")


class Admission:
    """At most `workers` transcriptions at once and `queue` more waiting; anything past that is
    refused at once, before its body is read, so memory is bounded by (workers + queue) uploads."""

    def __init__(self, workers: int, queue: int, metrics: Metrics):
        self._slots = threading.BoundedSemaphore(workers + queue)
        self._workers = threading.BoundedSemaphore(workers)
        self._metrics = metrics
        self._idle = threading.Condition()
        self._admitted = 0

    def admit(self) -> bool:
        if not self._slots.acquire(blocking=False):
            return False
        with self._idle:
            self._admitted += 1
        return True

    def leave(self) -> None:
        with self._idle:
            self._admitted -= 1
            self._idle.notify_all()
        self._slots.release()

    def work(self, timeout: float) -> bool:
        """Waits for a worker (counted as queued meanwhile); False after `timeout` seconds."""
        self._metrics.add("queued", 1)
        try:
            return self._workers.acquire(timeout=timeout)
        finally:
            self._metrics.add("queued", -1)

    def done(self) -> None:
        self._workers.release()

    def wait_idle(self, timeout: float) -> bool:
        with self._idle:
            return self._idle.wait_for(lambda: self._admitted == 0, timeout=timeout)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    # Connections open at once (each a thread); past this a new one is closed unanswered.
    max_connections = 64

    def __init__(self, address, handler, app: "App"):
        self.app = app
        self._connections = threading.BoundedSemaphore(self.max_connections)
        super().__init__(address, handler)

    def process_request(self, request, client_address):
        if not self._connections.acquire(blocking=False):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._connections.release()
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._connections.release()


class App:
    def __init__(self, settings: Settings, engine: Engine | None):
        self.settings = settings
        self.engine = engine
        multilingual = bool(engine and engine.multilingual)
        self.metrics = Metrics(settings.model_id, multilingual)
        self.admission = Admission(settings.concurrency, settings.max_queue, self.metrics)
        self.draining = threading.Event()
        self.started = int(time.time())


class Handler(BaseHTTPRequestHandler):
    server_version = "subx-speech/1"
    protocol_version = "HTTP/1.1"
    timeout = 60  # seconds a client may stay silent mid-request
    server: Server

    @property
    def app(self) -> App:
        return self.server.app

    def log_message(self, fmt, *args):  # one line per request, never headers (they carry the key)
        if getattr(self, "command", "") == "GET" and self.path.split("?", 1)[0] in QUIET_PATHS:
            return  # probes and scrapes every few seconds would drown the log
        sys.stderr.write("speech: %s %s\n" % (self.address_string(), fmt % args))

    # ---- answers -------------------------------------------------------------------------------

    def send_body(self, status: int, body: bytes, ctype: str, close: bool = False, extra=None):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_json(self, status: int, obj, **kw):
        self.send_body(status, json.dumps(obj).encode(), "application/json", **kw)

    def send_error_json(self, status, message, etype="invalid_request_error", code=None, param=None, **kw):
        err = {"message": message, "type": etype, "param": param, "code": code}
        self.send_json(status, {"error": err}, **kw)

    def refuse(self, status, message, etype, code, retry_after=None, param=None):
        """An error before the body was read: the body is drained (bounded) and the connection closed."""
        self.drain_body()
        extra = {"Retry-After": str(retry_after)} if retry_after else None
        self.send_error_json(status, message, etype=etype, code=code, param=param, close=True, extra=extra)

    def drain_body(self):
        try:
            left = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            left = 0
        if left > DRAIN_LIMIT:
            return
        while left > 0:
            chunk = self.rfile.read(min(left, 1 << 16))
            if not chunk:
                break
            left -= len(chunk)

    def authorised(self) -> bool:
        key = self.app.settings.api_key
        if not key:
            return True
        got = self.headers.get("Authorization", "")
        if got.startswith("Bearer ") and hmac.compare_digest(got[7:].strip().encode(), key.encode()):
            return True
        self.refuse(401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
        return False

    # ---- routes --------------------------------------------------------------------------------

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        app = self.app
        if path == "/health/live":
            self.send_json(200, {"status": "ok"})
        elif path in ("/health", "/health/ready"):
            if app.draining.is_set():
                self.send_json(503, {"status": "draining", "model": app.settings.model_id})
            else:
                self.send_json(200, {"status": "ok", "model": app.settings.model_id})
        elif path == "/metrics":
            self.send_body(200, app.metrics.render(), "text/plain; version=0.0.4; charset=utf-8")
        elif path in ("/v1/models", "/models"):
            if self.authorised():
                self.send_json(200, {"object": "list", "data": [self.model_object()]})
        elif path.startswith("/v1/models/"):
            if self.authorised():
                if path[len("/v1/models/"):] == app.settings.model_id:
                    self.send_json(200, self.model_object())
                else:
                    self.send_error_json(404, f"The model '{path[11:]}' does not exist.", code="model_not_found",
                                         param="model")
        else:
            self.send_error_json(404, f"Unknown path {path}", code="not_found")

    do_HEAD = do_GET

    def model_object(self) -> dict:
        return {"id": self.app.settings.model_id, "object": "model", "created": self.app.started,
                "owned_by": "subx"}

    def do_POST(self):
        path = self.path.split("?", 1)[0]
        if path not in TRANSCRIBE_PATHS:
            self.refuse(404, f"Unknown path {path}", "invalid_request_error", "not_found")
            return
        if not self.authorised():
            return
        app = self.app
        if app.draining.is_set():
            app.metrics.outcome("rejected")
            self.refuse(503, "The server is shutting down; retry on another instance.", "server_error",
                        "server_shutting_down", retry_after=1)
            return
        raw_len = self.headers.get("Content-Length")
        if raw_len is None or not raw_len.isdigit():
            self.send_error_json(411, "A Content-Length is required.", code="length_required", close=True)
            return
        length = int(raw_len)
        if length > app.settings.max_request_bytes:
            app.metrics.outcome("invalid")
            msg = f"Maximum content size limit ({app.settings.max_request_bytes}) exceeded ({length} bytes read)"
            self.refuse(413, msg, "invalid_request_error", "request_too_large")
            return
        if not app.admission.admit():
            app.metrics.outcome("rejected")
            self.refuse(503, "The engine is busy with other requests; retry later.", "server_error",
                        "engine_overloaded", retry_after=5)
            return
        try:
            self.admitted(length)
        finally:
            app.admission.leave()

    def admitted(self, length: int):
        app = self.app
        body = self.rfile.read(length)
        if len(body) < length:
            self.close_connection = True
            return
        fields, upload = parse_multipart(self.headers.get("Content-Type", ""), body)
        del body
        problem = check_fields(fields, upload)
        if problem:
            app.metrics.outcome("invalid")
            status, message, param, code = problem
            self.send_error_json(status, message, param=param, code=code)
            return
        fmt = fields.get("response_format") or "json"
        granularities = set(fields.get("timestamp_granularities[]", "segment").split(","))
        if not app.admission.work(app.settings.queue_timeout_s):
            app.metrics.outcome("rejected")
            self.send_error_json(503, "The engine is busy with other requests; retry later.",
                                 etype="server_error", code="engine_overloaded", extra={"Retry-After": "5"})
            return
        app.metrics.add("in_flight", 1)
        started = time.monotonic()
        try:
            transcript = app.engine.transcribe(upload, language_code(fields.get("language", "")),
                                               fields.get("prompt"), app.settings.max_audio_seconds)
        except AudioError as e:
            app.metrics.outcome("invalid")
            self.send_error_json(400, f"Invalid file format. {e}", param="file", code="invalid_audio")
            return
        except LanguageError as e:
            app.metrics.outcome("invalid")
            self.send_error_json(400, f"Unsupported language: {e}.", param="language", code="unsupported_language")
            return
        except Exception as e:  # noqa: BLE001 — a failed transcription is an answer, never a dead server
            app.metrics.outcome("error")
            sys.stderr.write(f"speech: transcription failed: {type(e).__name__}: {e}\n")
            self.send_error_json(500, "The transcription failed inside the engine.", etype="server_error",
                                 code="transcription_failed")
            return
        finally:
            app.metrics.add("in_flight", -1)
            app.admission.done()
        app.metrics.transcribed(transcript.duration, transcript.speech_seconds, time.monotonic() - started)
        app.metrics.outcome("ok" if transcript.segments else "no_speech")
        body, ctype = formats.render(transcript, fmt, granularities)
        self.send_body(200, body, ctype)


class MetricsHandler(Handler):
    """METRICS_PORT: /metrics and the health routes only; transcriptions are on the main port."""

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path in QUIET_PATHS:
            super().do_GET()
        else:
            self.send_error_json(404, f"Unknown path {path} (the metrics port serves /metrics)", code="not_found")

    do_HEAD = do_GET

    def do_POST(self):
        self.refuse(404, "The metrics port serves /metrics only.", "invalid_request_error", "not_found")


def check_fields(fields: dict, upload: bytes | None):
    """(status, message, param, code) of the first problem with a request's fields, else None."""
    if upload is None:
        return 400, "Missing required parameter: 'file'.", "file", "missing_file"
    if not upload:
        return 400, "Invalid file format. The file is empty.", "file", "invalid_audio"
    fmt = fields.get("response_format") or "json"
    if fmt not in formats.RESPONSE_FORMATS:
        allowed = ", ".join(formats.RESPONSE_FORMATS)
        return 400, f"Invalid value for 'response_format': must be one of {allowed}.", "response_format", "invalid_value"
    for g in fields.get("timestamp_granularities[]", "segment").split(","):
        if g not in GRANULARITIES:
            return (400, "Invalid value for 'timestamp_granularities[]': each must be 'segment' or 'word'.",
                    "timestamp_granularities[]", "invalid_value")
    if "timestamp_granularities[]" in fields and fmt != "verbose_json":
        return (400, "timestamp_granularities[] is only supported with response_format 'verbose_json'.",
                "timestamp_granularities[]", "invalid_value")
    temperature = fields.get("temperature", "")
    if temperature:
        try:
            if not 0 <= float(temperature) <= 1:
                raise ValueError
        except ValueError:
            return 400, "Invalid value for 'temperature': must be a number from 0 to 1.", "temperature", "invalid_value"
    if len(fields.get("prompt", "")) > 2000:
        return 400, "The prompt is too long (at most 2000 characters).", "prompt", "invalid_value"
    return None


def parse_multipart(ctype: str, body: bytes):
    """(fields, file bytes or None) of a multipart/form-data body; ({}, None) for anything else."""
    if not ctype.lower().startswith("multipart/form-data"):
        return {}, None
    msg = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + ctype.encode("latin-1") + b"\r\n\r\n" + body)
    if not msg.is_multipart():
        return {}, None
    fields: dict = {}
    upload = None
    for part in msg.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not name:
            continue
        data = part.get_payload(decode=True) or b""
        if name == "file":
            upload = data
        elif name in ("timestamp_granularities[]", "timestamp_granularities") :
            value = data.decode("utf-8", "replace").strip()
            key = "timestamp_granularities[]"
            fields[key] = f"{fields[key]},{value}" if key in fields else value
        else:
            fields[name] = data.decode("utf-8", "replace").strip()
    return fields, upload


def serve(app: App, host: str, port: int, metrics_port: int | None) -> int:
    httpd = Server((host, port), Handler, app)
    servers = [httpd]
    if metrics_port is not None:
        servers.append(Server((host, metrics_port), MetricsHandler, app))
    threads = [threading.Thread(target=s.serve_forever, name="http", daemon=True) for s in servers]
    for t in threads:
        t.start()
    stop = threading.Event()

    def on_signal(signum, _frame):
        if not app.draining.is_set():
            sys.stderr.write(f"speech: {signal.Signals(signum).name}: draining (new transcriptions get 503)\n")
            app.draining.set()
            app.metrics.draining = True
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    extra = f" (metrics on port {servers[1].server_address[1]})" if metrics_port is not None else ""
    print(f"listening on http://{host}:{httpd.server_address[1]}{extra}", flush=True)
    while not stop.wait(3600):
        pass
    drained = app.admission.wait_idle(app.settings.shutdown_timeout_s)
    for s in servers:
        s.shutdown()
        s.server_close()
    if not drained:
        sys.stderr.write("speech: shutdown deadline passed with transcriptions still running\n")
        return 1
    return 0


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    settings = load_settings(os.environ, sys.argv[1:])
    started = time.monotonic()
    engine = Engine(settings.model_dir, settings.cpu_threads, settings.concurrency, settings.device,
                    settings.compute_type, settings.window_s)
    kind = "multilingual" if engine.multilingual else "English-only"
    sys.stderr.write(f"speech: {settings.model_id} ({kind}, {settings.model_dir}) loaded in "
                     f"{time.monotonic() - started:.1f} s on {settings.device}/{settings.compute_type}, "
                     f"{settings.cpu_threads} threads, {settings.concurrency} worker(s)\n")
    socket.setdefaulttimeout(None)
    return serve(App(settings, engine), settings.host, settings.port, settings.metrics_port)


if __name__ == "__main__":
    sys.exit(main())

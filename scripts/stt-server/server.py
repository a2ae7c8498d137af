"""An OpenAI-compatible speech-to-text server: POST /v1/audio/transcriptions on PocketSphinx.

    python server.py [PORT]        # PORT from argv, else STT_PORT, else 0 (a free port)

Prints `listening on http://HOST:PORT` on stdout once it accepts connections. Settings (env):
STT_HOST (127.0.0.1), STT_PORT, STT_API_KEY (when set, `Authorization: Bearer <key>` is required),
STT_MAX_REQUEST_BYTES (26214400: 25 MiB, like OpenAI), STT_MAX_AUDIO_SECONDS (10800),
STT_CONCURRENCY (1 decoder at a time), STT_QUEUE_TIMEOUT_S (300), STT_DECODE_TIMEOUT_S (1800),
STT_MODEL_ID (pocketsphinx-en-us). See README.md.
"""

import hmac
import json
import os
import shutil
import sys
import tempfile
import time
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import formats  # noqa: E402
from recognise import AudioError, Recogniser, transcribe_file  # noqa: E402


def env_num(name: str, default: float) -> float:
    raw = os.environ.get(name, "")
    try:
        return float(raw) if raw else default
    except ValueError:
        sys.exit(f"stt-server: {name} must be a number, got {raw!r}")


API_KEY = os.environ.get("STT_API_KEY", "")
MAX_REQUEST_BYTES = int(env_num("STT_MAX_REQUEST_BYTES", 25 * 1024 * 1024))
MAX_AUDIO_SECONDS = env_num("STT_MAX_AUDIO_SECONDS", 3 * 3600)
QUEUE_TIMEOUT_S = env_num("STT_QUEUE_TIMEOUT_S", 300)
DECODE_TIMEOUT_S = env_num("STT_DECODE_TIMEOUT_S", 1800)
MODEL_ID = os.environ.get("STT_MODEL_ID", "pocketsphinx-en-us")
# A refused upload is read and thrown away (so the client sees the 413) up to this many bytes.
DRAIN_LIMIT = 256 * 1024 * 1024
RESPONSE_FORMATS = ("json", "text", "verbose_json", "srt", "vtt")
STARTED = int(time.time())


class Handler(BaseHTTPRequestHandler):
    server_version = "subx-stt/1"
    protocol_version = "HTTP/1.1"
    timeout = 60  # seconds a client may stay silent mid-request

    def log_message(self, fmt, *args):  # one line per request, never headers (they carry the key)
        sys.stderr.write("stt-server: %s %s\n" % (self.address_string(), fmt % args))

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

    def authorised(self) -> bool:
        if not API_KEY:
            return True
        got = self.headers.get("Authorization", "")
        if got.startswith("Bearer ") and hmac.compare_digest(got[7:].strip().encode(), API_KEY.encode()):
            return True
        self.drain_body()
        self.send_error_json(401, "Incorrect API key provided.", code="invalid_api_key", close=True)
        return False

    def drain_body(self):
        """Read and discard the request body (bounded), so the client gets to read our answer."""
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

    # ---- routes --------------------------------------------------------------------------------

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path == "/health":
            self.send_json(200, {"status": "ok", "model": MODEL_ID})
        elif path == "/v1/models":
            if self.authorised():
                model = {"id": MODEL_ID, "object": "model", "created": STARTED, "owned_by": "subx"}
                self.send_json(200, {"object": "list", "data": [model]})
        else:
            self.send_error_json(404, f"Unknown path {path}", code="not_found")

    do_HEAD = do_GET

    def do_POST(self):
        path = self.path.split("?", 1)[0]
        if path not in ("/v1/audio/transcriptions", "/audio/transcriptions"):
            self.drain_body()
            self.send_error_json(404, f"Unknown path {path}", code="not_found", close=True)
            return
        if not self.authorised():
            return
        raw_len = self.headers.get("Content-Length")
        if raw_len is None or not raw_len.isdigit():
            self.send_error_json(411, "A Content-Length is required.", code="length_required", close=True)
            return
        length = int(raw_len)
        if length > MAX_REQUEST_BYTES:
            self.drain_body()
            msg = f"Maximum content size limit ({MAX_REQUEST_BYTES}) exceeded ({length} bytes read)"
            self.send_error_json(413, msg, code="request_too_large", close=True)
            return
        body = self.rfile.read(length)
        if len(body) < length:
            self.close_connection = True
            return
        fields, upload = parse_multipart(self.headers.get("Content-Type", ""), body)
        del body
        if upload is None:
            self.send_error_json(400, "Missing required parameter: 'file'.", param="file", code="missing_file")
            return
        fmt = fields.get("response_format", "json") or "json"
        if fmt not in RESPONSE_FORMATS:
            allowed = ", ".join(RESPONSE_FORMATS)
            msg = f"Invalid value for 'response_format': must be one of {allowed}."
            self.send_error_json(400, msg, param="response_format", code="invalid_value")
            return
        self.transcribe(upload, fmt, fields)

    def transcribe(self, upload: bytes, fmt: str, fields: dict):
        tmpdir = tempfile.mkdtemp(prefix="subx-stt-")
        try:
            path = os.path.join(tmpdir, "audio")
            with open(path, "wb") as f:
                f.write(upload)
            del upload
            decoder = RECOGNISER.acquire(QUEUE_TIMEOUT_S)
            if decoder is None:
                msg = "The engine is busy with other requests; retry later."
                self.send_error_json(503, msg, etype="server_error", code="engine_overloaded",
                                     extra={"Retry-After": "5"})
                return
            try:
                transcript = transcribe_file(path, decoder, MAX_AUDIO_SECONDS, DECODE_TIMEOUT_S)
            finally:
                RECOGNISER.release(decoder)
        except AudioError as e:
            self.send_error_json(400, f"Invalid file format. {e}", param="file", code="invalid_audio")
            return
        finally:
            shutil.rmtree(tmpdir, ignore_errors=True)
        words = "word" in fields.get("timestamp_granularities[]", "").split(",")
        body, ctype = formats.render(transcript, fmt, words)
        self.send_body(200, body, ctype)


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
        elif name in fields:  # repeated fields (timestamp_granularities[]) are joined
            fields[name] += "," + data.decode("utf-8", "replace").strip()
        else:
            fields[name] = data.decode("utf-8", "replace").strip()
    return fields, upload


RECOGNISER: Recogniser


def main():
    global RECOGNISER
    if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return
    port = int(sys.argv[1]) if len(sys.argv) > 1 else int(env_num("STT_PORT", 0))
    host = os.environ.get("STT_HOST", "127.0.0.1")
    RECOGNISER = Recogniser(max(1, int(env_num("STT_CONCURRENCY", 1))))
    RECOGNISER.release(RECOGNISER.acquire(0))  # load the model before saying we are listening
    httpd = ThreadingHTTPServer((host, port), Handler)
    httpd.daemon_threads = True
    print(f"listening on http://{host}:{httpd.server_address[1]}", flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()


if __name__ == "__main__":
    main()

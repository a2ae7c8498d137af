# shellcheck shell=bash
# scripts/engines/probes.sh — readiness probes speaking each engine's own protocol, and the export lines
# Sourced by scripts/engines.sh (its settings and SELF are set there); not run on its own.

redis_cli() { timeout 5 redis-cli -h 127.0.0.1 "$@"; }

probe_redis() { [[ "$(redis_cli -p "$1" ping 2>/dev/null)" == PONG ]]; }

# Kafka: a real Metadata (v4) request; succeeds when the broker lists itself as registered.
probe_kafka() {
  timeout 10 python3 - "$1" <<'PY'
import socket, struct, sys
port = int(sys.argv[1])
cid = b"subx-engines-probe"
# header v1: api_key=3 (Metadata), api_version=4, correlation_id, client_id
body = struct.pack(">hhih", 3, 4, 42, len(cid)) + cid + struct.pack(">ib", -1, 0)  # all topics, no auto-create
try:
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(struct.pack(">i", len(body)) + body)
    def recv(n):
        buf = b""
        while len(buf) < n:
            chunk = s.recv(n - len(buf))
            if not chunk:
                raise EOFError("connection closed")
            buf += chunk
        return buf
    size, = struct.unpack(">i", recv(4))
    resp = recv(size)
    corr, throttle, nbrokers = struct.unpack(">iii", resp[:12])
    if corr != 42 or nbrokers < 1:
        sys.exit(1)
    off = 12
    found = False
    for _ in range(nbrokers):
        node, hl = struct.unpack(">ih", resp[off:off + 6]); off += 6
        off += hl
        bport, = struct.unpack(">i", resp[off:off + 4]); off += 4
        rl, = struct.unpack(">h", resp[off:off + 2]); off += 2
        if rl > 0:
            off += rl
        found = found or bport == port
    sys.exit(0 if found else 1)
except Exception:
    sys.exit(1)
PY
}

# FerretDB: a real MongoDB OP_MSG {ping: 1} on the admin database; needs {ok: 1}.
probe_mongo() {
  timeout 10 python3 - "$1" <<'PY'
import socket, struct, sys
port = int(sys.argv[1])
def cstr(s): return s.encode() + b"\x00"
elems = b"\x10" + cstr("ping") + struct.pack("<i", 1) + b"\x02" + cstr("$db") + struct.pack("<i", 6) + cstr("admin")
doc = struct.pack("<i", len(elems) + 5) + elems + b"\x00"
msg = struct.pack("<I", 0) + b"\x00" + doc
frame = struct.pack("<iiii", 16 + len(msg), 7, 0, 2013) + msg
def parse_ok(d):
    i, end = 4, len(d) - 1
    fixed = {1: 8, 7: 12, 8: 1, 9: 8, 10: 0, 16: 4, 17: 8, 18: 8, 19: 16, 0x7f: 0, 0xff: 0}
    while i < end:
        t = d[i]; i += 1
        j = d.index(b"\x00", i); name = d[i:j].decode(); i = j + 1
        if name == "ok":
            if t == 1: return struct.unpack("<d", d[i:i + 8])[0] == 1.0
            if t == 16: return struct.unpack("<i", d[i:i + 4])[0] == 1
            if t == 18: return struct.unpack("<q", d[i:i + 8])[0] == 1
            return False
        if t in fixed: i += fixed[t]
        elif t in (2, 13, 14): i += 4 + struct.unpack("<i", d[i:i + 4])[0]
        elif t in (3, 4): i += struct.unpack("<i", d[i:i + 4])[0]
        elif t == 5: i += 5 + struct.unpack("<i", d[i:i + 4])[0]
        else: return False
    return False
try:
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(frame)
    def recv(n):
        buf = b""
        while len(buf) < n:
            chunk = s.recv(n - len(buf))
            if not chunk:
                raise EOFError("connection closed")
            buf += chunk
        return buf
    hdr = recv(16)
    length, _, resp_to, opcode = struct.unpack("<iiii", hdr)
    body = recv(length - 16)
    if opcode != 2013 or resp_to != 7 or body[4] != 0:
        sys.exit(1)
    dlen, = struct.unpack("<i", body[5:9])
    sys.exit(0 if parse_ok(body[5:5 + dlen]) else 1)
except Exception:
    sys.exit(1)
PY
}

# The speech engine: GET /health/ready answers {"status": "ok"} once the model is loaded.
probe_stt() {
  timeout 5 python3 - "$1" <<'PY'
import json, sys, urllib.request
try:
    with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/health/ready", timeout=3) as r:
        sys.exit(0 if json.load(r).get("status") == "ok" else 1)
except Exception:
    sys.exit(1)
PY
}

engine_answers() {
  local port
  port=$(engine_port "$1" 2>/dev/null) || return 1
  "probe_$1" "$port"
}

engine_env_line() {
  local port
  port=$(engine_port "$1")
  case $1 in
    redis) echo "export REDIS_URL=redis://127.0.0.1:$port" ;;
    kafka) echo "export KAFKA_BROKERS=127.0.0.1:$port" ;;
    mongo) echo "export MONGO_URL=mongodb://127.0.0.1:$port/" ;;
    stt) echo "export TRANSCRIBE_BASE_URL=http://127.0.0.1:$port/v1"
         echo "export TRANSCRIBE_MODEL=$STT_MODEL_ID" ;;
    registry) echo "export SCHEMA_REGISTRY_URL=http://127.0.0.1:$port/apis/ccompat/v7" ;;
  esac
}

# shellcheck shell=bash
# scripts/engines/helpers.sh — logging, ports, processes and engine bookkeeping
# Sourced by scripts/engines.sh (its settings and SELF are set there); not run on its own.

log() { printf '[%s %s] %s\n' "$SELF" "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf '%s: ERROR: %s\n' "$SELF" "$*" >&2; exit 1; }

# tail_log FILE... : print the last 40 lines of each non-empty file to stderr
tail_log() {
  local f
  for f in "$@"; do
    if [[ -s $f ]]; then
      printf -- '----- last 40 lines of %s -----\n' "$f" >&2
      tail -n 40 "$f" >&2 || true
    fi
  done
  printf -- '-----\n' >&2
}

# fail ENGINE MESSAGE LOGFILE... : loud failure naming the engine, with its log tail
fail() {
  local engine=$1 msg=$2; shift 2
  printf '%s: ERROR: [%s] %s\n' "$SELF" "$engine" "$msg" >&2
  tail_log "$@"
  exit 1
}

now() { date +%s; }

norm_engine() {
  case $1 in
    redis) echo redis ;;
    kafka) echo kafka ;;
    mongo|mongodb|ferretdb|ferret) echo mongo ;;
    stt|speech) echo stt ;;
    registry|schema-registry|apicurio) echo registry ;;
    *) die "unknown engine '$1' (expected: redis, kafka, mongo/ferretdb, stt, registry)" ;;
  esac
}

# free_ports N : N distinct free loopback TCP ports (bound simultaneously, then released)
free_ports() {
  python3 - "$1" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks:
    s.close()
PY
}

port_is_free() {
  python3 - "$1" <<'PY'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)
PY
}

# proc_matches PID PATTERN : PID is alive and its command line contains PATTERN (guards against pid reuse)
proc_matches() {
  local pid=$1 pat=$2
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  [[ -r /proc/$pid/cmdline ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$pat"
}

engine_dir() { echo "$ENGINES_DIR/$1"; }

engine_pattern() {
  case $1 in
    redis) echo "redis-server" ;;
    kafka) echo "kafka.Kafka" ;;
    mongo) echo "ferretdb" ;;
    stt) echo "services/speech/server.py" ;;
    registry) echo "subx-schema-registry" ;;
  esac
}

engine_pid() {
  local f
  f="$(engine_dir "$1")/$1.pid"
  [[ -s $f ]] && head -n1 "$f" | tr -d '[:space:]'
}

engine_alive() {
  local pid
  pid=$(engine_pid "$1" 2>/dev/null) || return 1
  proc_matches "$pid" "$(engine_pattern "$1")"
}

engine_port() {
  local f
  f="$(engine_dir "$1")/port"
  [[ -s $f ]] && cat "$f"
}

# stop_pid PID PATTERN NAME : SIGTERM, wait (up to 60 s), then SIGKILL
stop_pid() {
  local pid=$1 pat=$2 name=$3 i
  proc_matches "$pid" "$pat" || return 0
  log "stopping $name (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 600; i++)); do
    proc_matches "$pid" "$pat" || return 0
    sleep 0.1
  done
  log "$name (pid $pid) did not exit after 60 s, sending SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    proc_matches "$pid" "$pat" || return 0
    sleep 0.1
  done
  die "could not stop $name (pid $pid)"
}

stop_engine() {
  local e=$1 pid
  pid=$(engine_pid "$e" 2>/dev/null) || return 0
  stop_pid "$pid" "$(engine_pattern "$e")" "$e"
  rm -f "$(engine_dir "$e")/$e.pid"
}

# wait_port_free PORT SECONDS
wait_port_free() {
  local port=$1 secs=$2 i
  for ((i = 0; i < secs * 5; i++)); do
    port_is_free "$port" && return 0
    sleep 0.2
  done
  return 1
}

#!/usr/bin/env bash
# scripts/engines.sh — run REAL Redis, Apache Kafka (KRaft) and FerretDB (MongoDB wire protocol)
# natively on loopback for integration tests. No Docker, no network at run time.
#
#   eval "$(scripts/engines.sh up)"            # start all three (or reuse running ones)
#   eval "$(scripts/engines.sh up redis kafka)" # a subset
#   scripts/engines.sh env [ENGINE...]          # print the export lines again (exit 1 if not running)
#   scripts/engines.sh restart kafka [--pause S] # stop (stay down S s) + start on the SAME ports, keeping data
#   scripts/engines.sh status                   # human summary
#   scripts/engines.sh down [ENGINE...]         # stop and delete run data
#
# ENGINE is one of: redis, kafka, mongo (alias: ferretdb). stdout carries only `export ...` lines;
# everything else goes to stderr. See scripts/engines.md.
set -euo pipefail

ENGINES_DIR=$(realpath -m "${ENGINES_DIR:-/tmp/subx-engines}")
ENGINES_CACHE=$(realpath -m "${ENGINES_CACHE:-${HOME:-/root}/.cache/subx-engines}")

KAFKA_VERSION=${KAFKA_VERSION:-4.2.0}   # Kafka 4.x only (log4j2 config below)
KAFKA_SCALA=2.13
KAFKA_HEAP_OPTS=${KAFKA_HEAP_OPTS:--Xmx512m -Xms128m}
# C1-only JIT + serial GC: the broker answers ~2x sooner on a busy 2-core machine and leaves more CPU
# to the tests; plenty for test traffic (set KAFKA_JVM_OPTS to override)
KAFKA_JVM_OPTS=${KAFKA_JVM_OPTS:--XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:+ExitOnOutOfMemoryError}
LOG4J2_VERSION=2.24.3                    # same log4j2 line the Kafka 4.x distribution ships
MAVEN_DEP_PLUGIN=org.apache.maven.plugins:maven-dependency-plugin:3.6.1
FERRETDB_VERSION=${FERRETDB_VERSION:-v1.24.0}  # last 1.x release (2.x needs PostgreSQL+DocumentDB)

REDIS_TIMEOUT=${REDIS_TIMEOUT:-30}
KAFKA_TIMEOUT=${KAFKA_TIMEOUT:-90}
MONGO_TIMEOUT=${MONGO_TIMEOUT:-30}

ALL_ENGINES=(redis kafka mongo)
SELF=engines.sh

# ----------------------------------------------------------------------------- helpers

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
    *) die "unknown engine '$1' (expected: redis, kafka, mongo/ferretdb)" ;;
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

# --------------------------------------------------------------------------- probes

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
  esac
}

# ------------------------------------------------------------------------- installers

as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo "$@"
  else return 1
  fi
}

install_redis() {
  command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 && return 0
  local alog="$ENGINES_CACHE/apt-redis.log" t0
  t0=$(now)
  log "redis: redis-server not on PATH, installing Debian's redis-server with apt (log: $alog)"
  if ! { as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 update &&
         as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y \
           --no-install-recommends redis-server; } >"$alog" 2>&1; then
    fail redis "apt-get install redis-server failed (needs root or passwordless sudo)" "$alog"
  fi
  command -v redis-server >/dev/null 2>&1 || fail redis "redis-server still not on PATH after apt install" "$alog"
  log "redis: installed $(redis-server --version | awk '{sub("v=", "", $3); print $3}') in $(($(now) - t0)) s"
}

kafka_home() { echo "$ENGINES_CACHE/kafka-$KAFKA_VERSION"; }

check_java() {
  command -v java >/dev/null 2>&1 || fail kafka "java not found on PATH (Kafka $KAFKA_VERSION needs Java 17+)"
  local v
  v=$(java -version 2>&1 | awk -F'"' '/version/ {print $2; exit}')
  v=${v%%.*}
  [[ $v =~ ^[0-9]+$ && $v -ge 17 ]] || fail kafka "Java 17+ required, found '$(java -version 2>&1 | head -n1)'"
}

install_kafka() {
  local home libs mlog t0
  home=$(kafka_home); libs="$home/libs"; mlog="$home/mvn.log"
  [[ -f $home/.complete ]] && return 0
  check_java
  command -v mvn >/dev/null 2>&1 || fail kafka "mvn not found on PATH (needed once to fetch Kafka jars from Maven Central)"
  t0=$(now)
  mkdir -p "$home"
  log "kafka: resolving org.apache.kafka:kafka_$KAFKA_SCALA:$KAFKA_VERSION + runtime deps with Maven (log: $mlog)"
  cat >"$home/pom.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<!-- generated by scripts/engines.sh: the runtime classpath of a Kafka $KAFKA_VERSION broker + CLI tools -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.subx-engines</groupId>
  <artifactId>kafka-runtime</artifactId>
  <version>$KAFKA_VERSION</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId><artifactId>kafka_$KAFKA_SCALA</artifactId><version>$KAFKA_VERSION</version>
    </dependency>
    <dependency>
      <!-- TopicCommand, ConsoleProducer, ConsoleConsumer, ... (the Connect runtime is not needed) -->
      <groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>$KAFKA_VERSION</version>
      <exclusions>
        <exclusion><groupId>org.apache.kafka</groupId><artifactId>connect-runtime</artifactId></exclusion>
      </exclusions>
    </dependency>
    <dependency>
      <!-- the broker only depends on slf4j-api: bind it to log4j2 like the Kafka distribution does -->
      <groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j-impl</artifactId><version>$LOG4J2_VERSION</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId><artifactId>log4j-core</artifactId><version>$LOG4J2_VERSION</version>
    </dependency>
  </dependencies>
</project>
EOF
  rm -rf "$libs.tmp"
  if ! (cd "$home" && mvn -B -q -f pom.xml "$MAVEN_DEP_PLUGIN:copy-dependencies" \
          -DincludeScope=runtime -DoutputDirectory="$libs.tmp") >"$mlog" 2>&1; then
    fail kafka "Maven could not resolve the Kafka $KAFKA_VERSION jars" "$mlog"
  fi
  local j
  for j in "kafka_$KAFKA_SCALA-$KAFKA_VERSION.jar" "kafka-tools-$KAFKA_VERSION.jar" "kafka-clients-$KAFKA_VERSION.jar" \
           "log4j-core-$LOG4J2_VERSION.jar"; do
    [[ -f $libs.tmp/$j ]] || fail kafka "expected jar $j missing after Maven resolution" "$mlog"
  done
  # check that the entry-point classes this script uses exist in this Kafka version
  python3 - "$libs.tmp" "$KAFKA_SCALA" "$KAFKA_VERSION" <<'PY' >>"$mlog" 2>&1 || fail kafka "Kafka entry-point classes not found in the jars" "$mlog"
import sys, zipfile
libs, scala, ver = sys.argv[1:]
core = set(zipfile.ZipFile(f"{libs}/kafka_{scala}-{ver}.jar").namelist())
tools = set(zipfile.ZipFile(f"{libs}/kafka-tools-{ver}.jar").namelist())
need = {"kafka/Kafka.class": core, "kafka/tools/StorageTool.class": core,
        "org/apache/kafka/tools/TopicCommand.class": tools, "org/apache/kafka/tools/ConsoleProducer.class": tools,
        "org/apache/kafka/tools/consumer/ConsoleConsumer.class": tools}
missing = [c for c, jar in need.items() if c not in jar]
print("missing classes:", missing) if missing else None
sys.exit(1 if missing else 0)
PY
  rm -rf "$libs"
  mv "$libs.tmp" "$libs"
  touch "$home/.complete"
  log "kafka: $(find "$libs" -name '*.jar' | wc -l) jars ($(du -sh "$libs" | cut -f1)) in $libs, took $(($(now) - t0)) s"
}

ferretdb_bin() { echo "$ENGINES_CACHE/ferretdb-$FERRETDB_VERSION/ferretdb"; }

find_go() {
  if command -v go >/dev/null 2>&1; then command -v go
  elif [[ -x /usr/local/go/bin/go ]]; then echo /usr/local/go/bin/go
  else return 1
  fi
}

install_ferretdb() {
  local bin home blog go src t0 moddir
  bin=$(ferretdb_bin); home=$(dirname "$bin"); blog="$home/build.log"
  [[ -x $bin ]] && return 0
  go=$(find_go) || fail mongo "go not found on PATH (needed once to build FerretDB $FERRETDB_VERSION)"
  t0=$(now)
  mkdir -p "$home"
  log "mongo: building FerretDB $FERRETDB_VERSION from the Go module proxy (log: $blog)"
  # `go install ...@version` needs the proxy's version list (deprecation check), which may be
  # unavailable; download the exact module instead and build it with its own go.mod/go.sum.
  # GOTOOLCHAIN=local: never download a toolchain. CGO off: pure-Go SQLite (modernc.org/sqlite).
  local goenv=(env GOTOOLCHAIN=local GOFLAGS=-buildvcs=false CGO_ENABLED=0 GO111MODULE=on)
  : >"$blog"
  moddir=$(cd "$home" && "${goenv[@]}" "$go" mod download -json "github.com/FerretDB/FerretDB@$FERRETDB_VERSION" 2>>"$blog" |
    python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("Dir","")) if not d.get("Error") else sys.exit(d["Error"])' 2>>"$blog") ||
    fail mongo "go mod download github.com/FerretDB/FerretDB@$FERRETDB_VERSION failed" "$blog"
  [[ -n $moddir && -d $moddir ]] || fail mongo "module source for FerretDB $FERRETDB_VERSION not found" "$blog"
  src="$home/src"
  rm -rf "$src"
  cp -R "$moddir" "$src"
  chmod -R u+w "$src"
  # FerretDB refuses to start without build/version/version.txt (normally written from `git describe`)
  echo "$FERRETDB_VERSION" >"$src/build/version/version.txt"
  if ! (cd "$src" && "${goenv[@]}" "$go" build -trimpath -o "$bin.tmp" ./cmd/ferretdb) >>"$blog" 2>&1; then
    fail mongo "go build of FerretDB $FERRETDB_VERSION failed" "$blog"
  fi
  "$bin.tmp" --version >>"$blog" 2>&1 || fail mongo "built ferretdb binary does not run" "$blog"
  mv "$bin.tmp" "$bin"
  rm -rf "$src"
  log "mongo: built $bin in $(($(now) - t0)) s"
}

# -------------------------------------------------------------------------- starters
# launch_X MODE starts a server without waiting for it: MODE "fresh" wipes its run dir and picks new
# free ports, "same" keeps data and ports (restart). wait_engine X then waits until it answers.
# Launched servers get stdin/stdout/stderr redirected and the lock fd closed, so that
# `eval "$(engines.sh up)"` returns as soon as the script is done.

wait_ready() {  # wait_ready ENGINE DEADLINE_S LOGFILE...
  local e=$1 secs=$2; shift 2
  local port t0 deadline
  port=$(engine_port "$e")
  t0=$(cat "$(engine_dir "$e")/launched-at" 2>/dev/null || now)
  deadline=$((t0 + secs))
  while :; do
    if ! engine_alive "$e"; then
      fail "$e" "server process exited during startup (port $port)" "$@"
    fi
    if "probe_$e" "$port"; then
      log "$e: answering on 127.0.0.1:$port (pid $(engine_pid "$e"), ready $(($(now) - t0)) s after launch)"
      return 0
    fi
    if (($(now) >= deadline)); then
      local pid
      pid=$(engine_pid "$e" 2>/dev/null || true)
      if [[ -n $pid ]]; then stop_pid "$pid" "$(engine_pattern "$e")" "$e" || true; fi
      fail "$e" "did not answer on 127.0.0.1:$port within ${secs}s" "$@"
    fi
    sleep 0.3
  done
}

wait_engine() {
  local e=$1 d
  d=$(engine_dir "$e")
  case $e in
    redis) wait_ready redis "$REDIS_TIMEOUT" "$d/redis.log" "$d/redis.out" ;;
    kafka) wait_ready kafka "$KAFKA_TIMEOUT" "$d/server.log" "$d/kafka.out" ;;
    mongo) wait_ready mongo "$MONGO_TIMEOUT" "$d/ferretdb.log" ;;
  esac
}

launch_redis() {
  local mode=$1 dir port
  dir=$(engine_dir redis)
  if [[ $mode == same && ! -s $dir/port ]]; then mode=fresh; fi
  if [[ $mode == fresh ]]; then
    rm -rf "$dir"; mkdir -p "$dir/data"
    port=$(free_ports 1); echo "$port" >"$dir/port"
  else
    port=$(engine_port redis)
    wait_port_free "$port" 30 || fail redis "port $port still in use, cannot restart on the same port"
  fi
  rm -f "$dir/redis.pid"
  now >"$dir/launched-at"
  log "redis: starting redis-server on 127.0.0.1:$port"
  redis-server --port "$port" --bind 127.0.0.1 --dir "$dir/data" --daemonize yes \
    --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" --save '' --appendonly no \
    </dev/null >>"$dir/redis.out" 2>&1 9>&- ||
    fail redis "redis-server failed to start" "$dir/redis.out" "$dir/redis.log"
  local i
  for ((i = 0; i < 100; i++)); do [[ -s $dir/redis.pid ]] && break; sleep 0.1; done
  [[ -s $dir/redis.pid ]] || fail redis "redis-server did not write its pid file" "$dir/redis.out" "$dir/redis.log"
}

kafka_cp() { echo "$(kafka_home)/libs/*"; }

# JVM flags for short-lived Kafka CLI tools (StorageTool here)
KAFKA_TOOL_JVM=(-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true)

new_cluster_id() {  # what `kafka-storage.sh random-uuid` prints: url-safe base64 of a random UUID
  python3 -c 'import uuid, base64
while True:
    s = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
    if not s.startswith("-"): break
print(s)'
}

write_kafka_tools_log4j() {  # warnings and errors of CLI tools to stderr only
  cat >"$1" <<'EOF'
status = warn
name = subx-engines-kafka-tools
appender.err.type = Console
appender.err.name = STDERR
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.err.ref = STDERR
EOF
}

# A KRaft log dir formatted once per Kafka version (kafka.tools.StorageTool format, node.id=1) and
# copied for every fresh broker: saves a JVM start on each `up`. The cluster id is therefore stable
# per cache. Skipped when KAFKA_EXTRA_CONFIG is set (then the real config is formatted instead).
kafka_storage_template() {
  local home tpl tmp cid
  home=$(kafka_home); tpl="$home/storage-template"
  [[ -f $tpl/.complete ]] && return 0
  tmp="$tpl.tmp.$$"
  rm -rf "$tmp"; mkdir -p "$tmp/data"
  cid=$(new_cluster_id)
  cat >"$tmp/format.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:9093
listeners=PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$tmp/data
EOF
  write_kafka_tools_log4j "$tmp/log4j2-tools.properties"
  log "kafka: formatting a KRaft storage template (cluster id $cid)"
  if ! java "${KAFKA_TOOL_JVM[@]}" -Dlog4j2.configurationFile="$tmp/log4j2-tools.properties" -cp "$(kafka_cp)" \
      kafka.tools.StorageTool format -t "$cid" -c "$tmp/format.properties" \
      </dev/null >"$tmp/format.log" 2>&1 9>&-; then
    cp "$tmp/format.log" "$home/format-failed.log" 2>/dev/null || true
    rm -rf "$tmp"
    fail kafka "kafka.tools.StorageTool format failed" "$home/format-failed.log"
  fi
  [[ -f $tmp/data/meta.properties ]] || fail kafka "StorageTool format wrote no meta.properties" "$tmp/format.log"
  touch "$tmp/.complete"
  if [[ -f $tpl/.complete ]]; then rm -rf "$tmp"; else rm -rf "$tpl"; mv "$tmp" "$tpl"; fi
}

launch_kafka() {
  local mode=$1 dir port cport
  dir=$(engine_dir kafka)
  check_java
  if [[ $mode == same && ! -f $dir/server.properties ]]; then
    log "kafka: no previous broker config in $dir, starting a fresh broker"
    mode=fresh
  fi
  if [[ $mode == fresh ]]; then
    rm -rf "$dir"; mkdir -p "$dir/data"
    read -r port cport < <(free_ports 2) || true
    [[ ${port:-} =~ ^[0-9]+$ && ${cport:-} =~ ^[0-9]+$ ]] || fail kafka "could not pick free loopback ports"
    echo "$port" >"$dir/port"; echo "$cport" >"$dir/controller-port"
    cat >"$dir/server.properties" <<EOF
# generated by scripts/engines.sh — single-node KRaft (combined broker + controller)
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$dir/data
auto.create.topics.enable=true
num.partitions=3
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
num.recovery.threads.per.data.dir=1
EOF
    if [[ -n ${KAFKA_EXTRA_CONFIG:-} ]]; then
      # @PORT@ and @CONTROLLER_PORT@ stand for the ports picked above (a later `listeners=` line
      # wins, so a test can add a listener, e.g. SASL_SSL, beside the PLAINTEXT one the probe uses)
      local extra=${KAFKA_EXTRA_CONFIG//@PORT@/$port}
      printf '# from KAFKA_EXTRA_CONFIG\n%s\n' "${extra//@CONTROLLER_PORT@/$cport}" >>"$dir/server.properties"
    fi
    cat >"$dir/log4j2.properties" <<EOF
# generated by scripts/engines.sh — everything to $dir/server.log, nothing to the console
status = warn
name = subx-engines-kafka
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = $dir/server.log
appender.file.append = true
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.kafkaapache.name = org.apache.kafka
logger.kafkaapache.level = INFO
logger.request.name = kafka.request.logger
logger.request.level = WARN
EOF
    # also handy for tests running TopicCommand / console producer & consumer from the same jars
    write_kafka_tools_log4j "$dir/log4j2-tools.properties"
    if [[ -z ${KAFKA_EXTRA_CONFIG:-} ]]; then
      kafka_storage_template
      cp -R "$(kafka_home)/storage-template/data/." "$dir/data/"
      sed -n 's/^cluster\.id=//p' "$dir/data/meta.properties" >"$dir/cluster-id"
    else
      new_cluster_id >"$dir/cluster-id"
      log "kafka: formatting KRaft storage with KAFKA_EXTRA_CONFIG applied"
      if ! java "${KAFKA_TOOL_JVM[@]}" -Dlog4j2.configurationFile="$dir/log4j2-tools.properties" -cp "$(kafka_cp)" \
          kafka.tools.StorageTool format -t "$(cat "$dir/cluster-id")" -c "$dir/server.properties" \
          </dev/null >"$dir/format.log" 2>&1 9>&-; then
        fail kafka "kafka.tools.StorageTool format failed" "$dir/format.log"
      fi
    fi
  else
    port=$(engine_port kafka); cport=$(cat "$dir/controller-port")
    wait_port_free "$port" 30 || fail kafka "port $port still in use, cannot restart on the same port"
    wait_port_free "$cport" 30 || fail kafka "controller port $cport still in use, cannot restart on the same port"
  fi
  rm -f "$dir/kafka.pid"
  now >"$dir/launched-at"
  log "kafka: starting Kafka $KAFKA_VERSION broker+controller on 127.0.0.1:$port (controller 127.0.0.1:$cport)"
  # shellcheck disable=SC2086 # KAFKA_HEAP_OPTS / KAFKA_JVM_OPTS are lists of JVM flags
  setsid java $KAFKA_HEAP_OPTS $KAFKA_JVM_OPTS -Djava.awt.headless=true \
    -Dkafka.logs.dir="$dir" -Dlog4j2.configurationFile="$dir/log4j2.properties" \
    -cp "$(kafka_cp)" kafka.Kafka "$dir/server.properties" \
    </dev/null >>"$dir/kafka.out" 2>&1 9>&- &
  echo $! >"$dir/kafka.pid"
}

launch_mongo() {
  local mode=$1 dir port bin
  dir=$(engine_dir mongo); bin=$(ferretdb_bin)
  if [[ $mode == same && ! -s $dir/port ]]; then mode=fresh; fi
  if [[ $mode == fresh ]]; then
    rm -rf "$dir"; mkdir -p "$dir/data" "$dir/state"
    port=$(free_ports 1); echo "$port" >"$dir/port"
  else
    port=$(engine_port mongo)
    wait_port_free "$port" 30 || fail mongo "port $port still in use, cannot restart on the same port"
  fi
  rm -f "$dir/mongo.pid"
  now >"$dir/launched-at"
  log "mongo: starting FerretDB $FERRETDB_VERSION (SQLite backend) on 127.0.0.1:$port"
  setsid "$bin" --handler=sqlite --sqlite-url="file:$dir/data/" --listen-addr="127.0.0.1:$port" \
    --state-dir="$dir/state" --debug-addr=- --telemetry=disable --log-level=info --log-format=text \
    </dev/null >>"$dir/ferretdb.log" 2>&1 9>&- &
  echo $! >"$dir/mongo.pid"
}

# ------------------------------------------------------------------------ subcommands

parse_engines() {  # sets ENGINES from args (default: all)
  ENGINES=()
  local a e seen=" "
  if (($# == 0)); then ENGINES=("${ALL_ENGINES[@]}"); return; fi
  for a in "$@"; do
    e=$(norm_engine "$a")
    [[ $seen == *" $e "* ]] && continue
    seen+="$e "; ENGINES+=("$e")
  done
}

check_dirs() {  # ENGINES_DIR is deleted by `down`: refuse obviously wrong values
  local home=${HOME:-/root} d=$ENGINES_DIR
  if [[ $d != /*/* || $d == "$home" || $home == "$d"/* || $PWD == "$d" || $PWD == "$d"/* ]]; then
    die "refusing to use ENGINES_DIR=$d (it is deleted by down; use a dedicated folder like /tmp/subx-engines)"
  fi
}

take_lock() {
  check_dirs
  mkdir -p "$(dirname "$ENGINES_DIR")" "$ENGINES_CACHE"
  exec 9>"$ENGINES_DIR.lock"
  if ! flock -w 900 9; then die "another engines.sh is holding $ENGINES_DIR.lock for more than 15 minutes"; fi
}

print_env() {  # print export lines for every engine that is up
  local e
  for e in "${ALL_ENGINES[@]}"; do
    if engine_alive "$e"; then engine_env_line "$e"; fi
  done
  return 0
}

cmd_up() {
  parse_engines "$@"
  take_lock
  local t0 e need=()
  t0=$(now)
  mkdir -p "$ENGINES_DIR"
  touch "$ENGINES_DIR/.subx-engines"   # marker: `down` only deletes a directory carrying it
  for e in "${ENGINES[@]}"; do
    if engine_alive "$e" && engine_answers "$e"; then
      log "$e: already running on 127.0.0.1:$(engine_port "$e") (pid $(engine_pid "$e")), reusing it"
    else
      if engine_alive "$e"; then
        log "$e: process $(engine_pid "$e") is alive but does not answer; replacing it"
        stop_engine "$e"
      fi
      need+=("$e")
    fi
  done
  if ((${#need[@]})); then
    # install what is missing; Maven and the Go build run in parallel (network- vs CPU-bound)
    local pids=() names=() i rc=0
    for e in "${need[@]}"; do
      case $e in
        kafka) install_kafka & pids+=($!); names+=(kafka) ;;
        mongo) install_ferretdb & pids+=($!); names+=(mongo) ;;
      esac
    done
    for e in "${need[@]}"; do
      if [[ $e == redis ]]; then (install_redis) || rc=1; fi
    done
    for i in "${!pids[@]}"; do
      wait "${pids[$i]}" || { rc=1; log "${names[$i]}: install failed (see above)"; }
    done
    ((rc == 0)) || die "installation failed"
    # launch Kafka first (slowest to boot), then the others, then wait for each
    for e in kafka redis mongo; do
      if [[ " ${need[*]} " == *" $e "* ]]; then "launch_$e" fresh; fi
    done
    for e in "${need[@]}"; do wait_engine "$e"; done
  fi
  log "up: ${ENGINES[*]} ready in $(($(now) - t0)) s (run data: $ENGINES_DIR, cache: $ENGINES_CACHE)"
  print_env
}

cmd_env() {
  parse_engines "$@"
  local e rc=0
  for e in "${ENGINES[@]}"; do
    if engine_alive "$e"; then
      engine_env_line "$e"
    else
      echo "$SELF: $e is not running (run: scripts/engines.sh up $e)" >&2
      rc=1
    fi
  done
  return $rc
}

cmd_down() {
  parse_engines "$@"
  take_lock
  local e
  for e in "${ENGINES[@]}"; do stop_engine "$e"; done
  if (($# == 0)); then
    if [[ -e $ENGINES_DIR/.subx-engines ]]; then
      rm -rf "$ENGINES_DIR"
      log "down: all engines stopped, removed $ENGINES_DIR"
    elif [[ -d $ENGINES_DIR ]]; then
      log "down: $ENGINES_DIR has no .subx-engines marker, not deleting it"
    else
      log "down: nothing was running"
    fi
  else
    for e in "${ENGINES[@]}"; do rm -rf "$(engine_dir "$e")"; done
    log "down: stopped ${ENGINES[*]}"
  fi
}

cmd_restart() {
  local pause=0 args=()
  while (($#)); do
    case $1 in
      --pause) [[ ${2:-} =~ ^[0-9]+([.][0-9]+)?$ ]] || die "--pause needs a number of seconds"; pause=$2; shift 2 ;;
      --pause=*) pause=${1#--pause=}; [[ $pause =~ ^[0-9]+([.][0-9]+)?$ ]] || die "--pause needs a number of seconds"; shift ;;
      *) args+=("$1"); shift ;;
    esac
  done
  ((${#args[@]} > 0)) || die "usage: $SELF restart ENGINE... [--pause SECONDS]   (e.g. restart kafka)"
  parse_engines "${args[@]}"
  take_lock
  local e t0
  for e in "${ENGINES[@]}"; do
    t0=$(now)
    if [[ ! -s $(engine_dir "$e")/port ]]; then
      log "$e: was never started, doing a fresh start"
      case $e in redis) install_redis ;; kafka) install_kafka ;; mongo) install_ferretdb ;; esac
      "launch_$e" fresh
    else
      stop_engine "$e"
      if [[ $pause != 0 ]]; then log "$e: down, pausing ${pause}s before starting it again"; sleep "$pause"; fi
      "launch_$e" same
    fi
    wait_engine "$e"
    log "$e: restarted on 127.0.0.1:$(engine_port "$e") in $(($(now) - t0)) s"
  done
  print_env
}

cmd_status() {
  local e port pid state
  echo "engines run dir: $ENGINES_DIR"
  echo "engines cache:   $ENGINES_CACHE"
  for e in "${ALL_ENGINES[@]}"; do
    port=$(engine_port "$e" 2>/dev/null || echo -)
    pid=$(engine_pid "$e" 2>/dev/null || echo -)
    if engine_alive "$e"; then
      if engine_answers "$e"; then state="running, answering"; else state="running, NOT answering"; fi
    else
      state="stopped"
    fi
    case $e in
      redis) printf '  %-6s %-24s port %-6s pid %-8s %s\n' redis "$state" "$port" "$pid" \
               "$(command -v redis-server >/dev/null 2>&1 && redis-server --version | awk '{sub("v=", "", $3); print "Redis " $3}' || echo 'redis-server not installed')" ;;
      kafka) printf '  %-6s %-24s port %-6s pid %-8s Kafka %s (KRaft, controller port %s)%s\n' kafka "$state" "$port" "$pid" \
               "$KAFKA_VERSION" "$(cat "$(engine_dir kafka)/controller-port" 2>/dev/null || echo -)" \
               "$([[ -f $(kafka_home)/.complete ]] || echo ', jars not downloaded yet')" ;;
      mongo) printf '  %-6s %-24s port %-6s pid %-8s FerretDB %s (SQLite)%s\n' mongo "$state" "$port" "$pid" \
               "$FERRETDB_VERSION" "$([[ -x $(ferretdb_bin) ]] || echo ', not built yet')" ;;
    esac
  done
  return 0
}

usage() {
  cat >&2 <<EOF
usage: $SELF up [ENGINE...]        start (or reuse) engines; prints export lines on stdout
       $SELF env [ENGINE...]       print export lines for running engines (exit 1 if one is not running)
       $SELF restart ENGINE... [--pause S]
                                    stop, optionally stay down S seconds, start again on the
                                    same port keeping data (simulates an outage)
       $SELF status                human summary
       $SELF down [ENGINE...]      stop engines and remove their run data
ENGINE: redis | kafka | mongo (alias ferretdb); default: all three.
Env: ENGINES_DIR (default /tmp/subx-engines), ENGINES_CACHE (default ~/.cache/subx-engines),
     KAFKA_HEAP_OPTS, KAFKA_EXTRA_CONFIG (extra server.properties lines; @PORT@ and
     @CONTROLLER_PORT@ are replaced by the broker's ports).
EOF
}

main() {
  local cmd=${1:-}
  (($#)) && shift
  case $cmd in
    up|start) cmd_up "$@" ;;
    env) cmd_env "$@" ;;
    down|stop) cmd_down "$@" ;;
    restart) cmd_restart "$@" ;;
    status) cmd_status ;;
    -h|--help|help) usage ;;
    *) usage; exit 2 ;;
  esac
}

main "$@"

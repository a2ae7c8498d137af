#!/usr/bin/env bash
# scripts/registry.sh — a local OCI registry for releases: CNCF distribution's `registry`, built
# from the Go module proxy (once, cached beside helm in ~/.cache/subx-tools/bin), serving plain
# HTTP on localhost. scripts/release.sh pushes the images and the chart to it; the cluster test
# installs from it (deploy/README.md, "Releases").
#
#   bash scripts/registry.sh build   # build (once) the registry binary
#   bash scripts/registry.sh up      # build, start on $REGISTRY_ADDR, wait until /v2/ answers;
#                                    # prints REGISTRY=<host:port> on stdout
#   bash scripts/registry.sh down    # stop it (the stored images stay in $REGISTRY_DATA)
#   bash scripts/registry.sh env     # prints REGISTRY=<host:port> of the running registry
#
# Progress goes to stderr; stdout carries only the REGISTRY line.
set -euo pipefail
cd "$(dirname "$0")/.."

DISTRIBUTION_VERSION=v3.1.2
TOOLS_DIR=$(realpath -m "${SUBX_TOOLS_DIR:-${HOME:-/root}/.cache/subx-tools}")
BIN=$TOOLS_DIR/bin/registry
STAMP="distribution $DISTRIBUTION_VERSION"
REGISTRY_ADDR=${REGISTRY_ADDR:-127.0.0.1:5000}
RUN_DIR=${REGISTRY_RUN_DIR:-/tmp/subx-registry}
REGISTRY_DATA=${REGISTRY_DATA:-$RUN_DIR/data}
# The name clients use: docker and containerd treat localhost as plain HTTP without more setup.
REGISTRY_NAME=localhost:${REGISTRY_ADDR##*:}
START_TIMEOUT=${REGISTRY_START_TIMEOUT:-30}

SELF=registry.sh
log() { printf '[%s %s] %s\n' "$SELF" "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf '%s: ERROR: %s\n' "$SELF" "$*" >&2; exit 1; }

go_bin() {
  if command -v go >/dev/null; then command -v go
  elif [ -x /usr/local/go/bin/go ]; then echo /usr/local/go/bin/go
  else die "Go is needed once to build the registry (https://go.dev/doc/install)"; fi
}

cmd_build() {
  if [ -x "$BIN" ] && [ "$(cat "$BIN.stamp" 2>/dev/null)" = "$STAMP" ]; then return 0; fi
  local go t0=$SECONDS blog=$TOOLS_DIR/registry-build.log
  go=$(go_bin)
  mkdir -p "$TOOLS_DIR/bin"
  log "building the registry (github.com/distribution/distribution/v3 $DISTRIBUTION_VERSION) from the Go module proxy (log: $blog)"
  (cd /tmp && GOWORK=off GOBIN="$TOOLS_DIR/bin" CGO_ENABLED=0 nice -n "${REGISTRY_BUILD_NICE:-15}" \
    "$go" install -trimpath -ldflags="-s -w" \
    "github.com/distribution/distribution/v3/cmd/registry@$DISTRIBUTION_VERSION") >"$blog" 2>&1 ||
    { tail -n 20 "$blog" >&2; die "building the registry failed"; }
  echo "$STAMP" >"$BIN.stamp"
  log "registry built in $((SECONDS - t0)) s"
}

answers() { curl -fsS --max-time 2 -o /dev/null "http://$REGISTRY_ADDR/v2/" 2>/dev/null; }
running() { [ -f "$RUN_DIR/pid" ] && kill -0 "$(cat "$RUN_DIR/pid")" 2>/dev/null; }

cmd_up() {
  cmd_build
  if running && answers; then
    log "registry already running on $REGISTRY_ADDR"
    echo "REGISTRY=$REGISTRY_NAME"
    return 0
  fi
  answers && die "something else answers on $REGISTRY_ADDR (set REGISTRY_ADDR to another address)"
  mkdir -p "$RUN_DIR" "$REGISTRY_DATA"
  # Deletes on: a CI registry is emptied with `down` and a fresh data directory, an operator's
  # copy may prune old tags. No auth: it listens on loopback only.
  cat >"$RUN_DIR/config.yml" <<EOF
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $REGISTRY_DATA
  delete:
    enabled: true
http:
  addr: $REGISTRY_ADDR
EOF
  # Its own OpenTelemetry export off: nothing collects it here.
  OTEL_TRACES_EXPORTER=none setsid "$BIN" serve "$RUN_DIR/config.yml" >"$RUN_DIR/registry.log" 2>&1 </dev/null &
  echo $! >"$RUN_DIR/pid"
  local deadline=$((SECONDS + START_TIMEOUT))
  until answers; do
    running || { tail -n 20 "$RUN_DIR/registry.log" >&2; die "the registry exited at start (log: $RUN_DIR/registry.log)"; }
    [ $SECONDS -lt $deadline ] || die "the registry did not answer on $REGISTRY_ADDR within ${START_TIMEOUT} s (log: $RUN_DIR/registry.log)"
    sleep 0.5
  done
  log "registry $DISTRIBUTION_VERSION on http://$REGISTRY_ADDR (data: $REGISTRY_DATA, log: $RUN_DIR/registry.log)"
  echo "REGISTRY=$REGISTRY_NAME"
}

cmd_down() {
  running || { rm -f "$RUN_DIR/pid"; return 0; }
  local pid i
  pid=$(cat "$RUN_DIR/pid")
  kill "$pid" 2>/dev/null || true
  for i in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
  rm -f "$RUN_DIR/pid"
  log "registry stopped (data kept in $REGISTRY_DATA)"
}

case ${1:-} in
  build) cmd_build ;;
  up) cmd_up ;;
  down) cmd_down ;;
  env) running && answers || die "no registry running"; echo "REGISTRY=$REGISTRY_NAME" ;;
  *) die "usage: $SELF build|up|down|env" ;;
esac

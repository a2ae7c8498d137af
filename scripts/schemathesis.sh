#!/usr/bin/env bash
# Fuzzing the live API with schemathesis: `npm start` on embedded adapters against the
# offline fake platform, then schemathesis's stateless checks over the live /openapi.json, once
# without a key and once with the pro key `npm start` prints. Any 5xx (not_a_server_error), a
# documented response whose body does not match its schema (response_schema_conformance) or whose
# content type is not the documented one (content_type_conformance) fails the run.
# Not checked: status_code_conformance. Node's HTTP parser answers a request line over 16 KB with
# 431 before the app sees it, a status the OpenAPI document does not list.
#
# schemathesis comes from PyPI into a virtual environment cached under ~/.cache (created on the
# first run, reused afterwards). Bounded: SCHEMATHESIS_MAX_EXAMPLES cases per operation (default
# 25), a fixed seed so a failure reproduces, each request bounded by 30 s; one worker (hypothesis
# 6.x on Python 3.11 fails with "AST constructor recursion depth mismatch" when run in threads).
#
#   bash scripts/schemathesis.sh          # part of `npm test` under CI=true (scripts/test.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

SCHEMATHESIS_VERSION=4.32.5
MAX_EXAMPLES=${SCHEMATHESIS_MAX_EXAMPLES:-25}
SEED=${SCHEMATHESIS_SEED:-20261122}
CACHE=${SUBX_CACHE_DIR:-${HOME:-/root}/.cache/subx}/schemathesis-$SCHEMATHESIS_VERSION
NODE=node_modules/.bin/node
log() { printf '[schemathesis.sh] %s\n' "$*" >&2; }


. scripts/python/venv.sh
python_tool_venv "$CACHE" "schemathesis==$SCHEMATHESIS_VERSION" st

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# The fake platform (loopback only: no test touches the network).
"$NODE" --disable-warning=ExperimentalWarning -e "
  import('@subx/testing/fake-youtube').then(async (m) => {
    const yt = await m.startFakeYouTube();
    process.stdout.write(yt.url + '\n');
  });" >"$work/youtube.out" 2>"$work/youtube.err" &
pids+=($!)
for _ in $(seq 1 100); do [[ -s $work/youtube.out ]] && break; sleep 0.1; done
youtube_url=$(head -n1 "$work/youtube.out")
[[ -n $youtube_url ]] || { cat "$work/youtube.err" >&2; log "fake platform did not start"; exit 1; }

PORT=0 ADMIN_PORT=0 METRICS_PORT=0 YOUTUBE_BASE_URL=$youtube_url REDIS_URL='' KAFKA_BROKERS='' MONGO_URL='' OPENAI_API_KEY='' \
  LOG_LEVEL=error "$NODE" --disable-warning=ExperimentalWarning \
  scripts/start-embedded.ts >"$work/start.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 600); do grep -q 'pro API key' "$work/start.out" && break; sleep 0.1; done
base=$(sed -n 's/.*subx is running at \(http[^ ]*\).*/\1/p' "$work/start.out" | head -n1)
key=$(sed -n 's/.*pro API key: *\(sxk_v1_[A-Za-z0-9]*\).*/\1/p' "$work/start.out" | head -n1)
[[ -n $base && -n $key ]] || { cat "$work/start.out" >&2; log "npm start did not come up"; exit 1; }
log "API at $base (fake platform at $youtube_url), $MAX_EXAMPLES examples per operation, seed $SEED"

run() {
  local label=$1; shift
  log "run: $label"
  # From the scratch directory: schemathesis and hypothesis keep caches in the working directory.
  (cd "$work" && "$CACHE/bin/st" run "$base/openapi.json" \
    --checks not_a_server_error,response_schema_conformance,content_type_conformance \
    --phases examples,coverage,fuzzing \
    --max-examples "$MAX_EXAMPLES" --seed "$SEED" --no-shrink \
    --request-timeout 30 --workers 1 \
    --suppress-health-check all --warnings off --output-truncate true \
    "$@")
}

status=0
run 'without a key' || status=1
run 'with a pro key' -H "X-API-Key: $key" || status=1
if [[ $status -ne 0 ]]; then
  # What the service said last (a crash, an unhandled rejection) is the first thing to read.
  log "npm start's last output:"
  tail -n 60 "$work/start.out" >&2
  log "FAILED: see the failures above"
  exit 1
fi
log "passed: no 5xx, every response as documented"

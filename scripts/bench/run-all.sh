#!/usr/bin/env bash
# `npm run bench`: runs every benchmark in turn, then prints one table of every figure with its
# target (scripts/bench/summary.ts). Each reports ratios against a baseline measured in the same run
# (machines here are noisy); absolute numbers are only comparable within one run.
# batch-fanout and bulk-job need a real broker: eval "$(bash scripts/engines.sh up kafka)" first, or
# they use the in-process bus and say so.
#
#   npm run bench                 # everything (about 17 minutes)
#   npm run bench -- --quick      # the CI-safe variant: ratios only, generous bounds, under a minute
set -uo pipefail
cd "$(dirname "$0")/../.."
node=node_modules/.bin/node
out=$(mktemp -t subx-bench.XXXXXX)
trap 'rm -f "$out"' EXIT
crashed=()
run() {
  echo "== $*"
  "$node" --disable-warning=ExperimentalWarning "scripts/bench/$1.ts" "${@:2}" 2>&1 | tee -a "$out" ||
    crashed+=("$1")
  echo
}
if [[ ${1:-} == --quick ]]; then
  # Ratios against a baseline of the same run, with bounds that only a large regression breaks.
  run npm-start-extract --quick
  run cold-extract --latency 100 --runs 3 --max-ratio 4
  # about 30 s: 10 minutes of audio, throughput and CPU per audio minute (no memory figure there)
  run transcribe-audio --quick
  # about a minute: the speech engine's word error rate, real-time factor and non-speech clips
  # (needs its venv: CI's engines step makes it; espeak-ng and sox from .ci/run's apt step)
  run stt-quality --quick
  # Not bulk-job --quick: 24–37 s here, mostly startup, and a wall-time ratio that swings with
  # the machine's load; run it by hand (scripts/bench/bulk-job.ts).
else
  for bench in youtube-parse cold-extract ladder-adaptation vs-youtube-transcript-api cold-extract-cpu npm-start-extract gateway-extract batch-fanout bulk-job metrics-record transcribe-audio stt-quality; do
    [ -f "scripts/bench/$bench.ts" ] && run "$bench" "$@"
  done
  # The same extract on the images under docker compose: where Docker answers (scripts/containers.sh).
  if timeout 10 docker info >/dev/null 2>&1; then run compose-extract "$@"
  else echo "== compose-extract: not run (no Docker engine answers; bash scripts/containers.sh engine starts one)"; fi
fi
"$node" --disable-warning=ExperimentalWarning scripts/bench/summary.ts "$out"
# A benchmark that crashed measured nothing: the run fails, naming it, whatever the table says.
if ((${#crashed[@]})); then
  echo "bench: crashed (measured nothing): ${crashed[*]}" >&2
  exit 1
fi

#!/usr/bin/env bash
# Runs every benchmark in turn. Each reports ratios against a baseline measured in the same run
# (machines here are noisy); absolute numbers are only comparable within one run.
# batch-fanout needs a real broker: eval "$(bash scripts/engines.sh up kafka)" first, or it uses
# the in-process bus and says so.
set -uo pipefail
cd "$(dirname "$0")/../.."
node=node_modules/.bin/node
status=0
for bench in youtube-parse cold-extract vs-youtube-transcript-api gateway-extract batch-fanout metrics-record; do
  [ -f "scripts/bench/$bench.ts" ] || continue
  echo "== $bench"
  "$node" --disable-warning=ExperimentalWarning "scripts/bench/$bench.ts" "$@" || status=1
  echo
done
exit $status

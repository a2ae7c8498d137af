#!/usr/bin/env bash
# Fails when proto/ does not lint or the checked-in generated code is stale.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/proto-gen.sh
if ! git diff --quiet --exit-code -- packages/contracts/src/gen || [ -n "$(git ls-files --others --exclude-standard packages/contracts/src/gen)" ]; then
  echo "proto-check: packages/contracts/src/gen is stale; run 'npm run proto:gen' and commit the result." >&2
  git --no-pager diff --stat -- packages/contracts/src/gen >&2
  exit 1
fi
echo "proto-check: generated contracts are up to date"

#!/usr/bin/env bash
# Regenerates packages/contracts/src/gen from proto/ with buf + ts-proto (both pinned in package-lock.json).
set -euo pipefail
cd "$(dirname "$0")/.."
npx --no-install buf lint proto
(cd proto && ../node_modules/.bin/buf generate)
npx --no-install prettier --log-level warn --write packages/contracts/src/gen >/dev/null

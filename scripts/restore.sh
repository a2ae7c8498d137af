#!/usr/bin/env bash
# docs/operations.md, "Restore": MONGO_URL, MONGO_DB, REDIS_URL (and BILLING_MONGO_URL /
# BILLING_MONGO_DB when billing has its own database) name the engines.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# The repository's pinned Node (package.json devDependencies), which runs .ts from source.
node="$root/node_modules/.bin/node"
[[ -x "$node" ]] || node=node
exec "$node" --disable-warning=ExperimentalWarning "$root/scripts/backup-restore.ts" restore "$@"

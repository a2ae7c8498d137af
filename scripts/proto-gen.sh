#!/usr/bin/env bash
# Regenerates packages/contracts/src/gen from proto/ with buf + ts-proto (both pinned in package-lock.json).
set -euo pipefail
cd "$(dirname "$0")/.."
npx --no-install buf lint proto
(cd proto && ../node_modules/.bin/buf generate)
npx --no-install prettier --log-level warn --write packages/contracts/src/gen >/dev/null
# The event messages' descriptors (a FileDescriptorSet, imports included, no comments: a comment
# edit is no new schema), from which the schema registry learns our schemas (event-schemas.ts).
(cd proto && ../node_modules/.bin/buf build --path subx/events --exclude-source-info \
  -o ../packages/contracts/src/gen/events.binpb)

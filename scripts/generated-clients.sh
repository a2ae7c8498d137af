#!/usr/bin/env bash
# The Python client a user would generate: openapi-python-client over the live /openapi.json of a
# running API, then test/system/generated-clients/driver.py calls every operation and every format
# through it (typed models, Bearer auth) and one error of each kind.
#
# Run by test/system/generated-clients.test.ts (under CI=true, part of `npm test`; locally once
# the environment below is cached), which starts `npm start` on the fake platform and passes:
#   SUBX_BASE, SUBX_KEY (pro), SUBX_FREE_KEY, SUBX_FREE_DAILY_LIMIT, SUBX_VIDEO, SUBX_PRIVATE_VIDEO,
#   SUBX_COMMENTS_VIDEO, SUBX_PLAYLIST
#
# openapi-python-client comes from PyPI into a virtual environment cached under ~/.cache/subx
# (created on the first run, reused afterwards), like scripts/schemathesis.sh's.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON_CLIENT_VERSION=0.29.1
CACHE=${SUBX_CACHE_DIR:-${HOME:-/root}/.cache/subx}/openapi-python-client-$PYTHON_CLIENT_VERSION
log() { printf '[generated-clients.sh] %s\n' "$*" >&2; }

: "${SUBX_BASE:?SUBX_BASE (the API under test) is not set}"

. scripts/python/venv.sh
python_tool_venv "$CACHE" "openapi-python-client==$PYTHON_CLIENT_VERSION" openapi-python-client

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The generator's defaults, but a fixed package name for the driver to import, no formatter run
# afterwards (its default post hook is ruff, which is not installed here), and NDJSON read as text
# (the generator knows no application/x-ndjson; docs/clients.md gives users the same line).
printf 'package_name_override: subx_client\nproject_name_override: subx-client\npost_hooks: []\ncontent_type_overrides:\n  application/x-ndjson: text/plain\n' >"$work/config.yml"
log "generating the client from $SUBX_BASE/openapi.json"
(cd "$work" && "$CACHE/bin/openapi-python-client" generate --url "$SUBX_BASE/openapi.json" \
  --config "$work/config.yml" --meta none --output-path "$work/subx_client" --fail-on-warning)

log "running test/system/generated-clients/driver.py"
PYTHONPATH=$work "$CACHE/bin/python" test/system/generated-clients/driver.py

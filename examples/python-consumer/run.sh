#!/usr/bin/env bash
# Runs consumer.py: makes (once) a virtual environment with requirements.txt under
# ${SUBX_CACHE_DIR:-~/.cache/subx}/python-consumer-<hash of requirements.txt>, generates the Python
# classes of proto/subx/events/v1 with grpcio-tools' bundled protoc (again cached, keyed by the
# hash of proto/), then passes every argument on to consumer.py. Idempotent; needs python3 (with
# venv) and PyPI only the first time.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${SUBX_CACHE_DIR:-${HOME:-/root}/.cache/subx}
log() { printf '[python-consumer] %s\n' "$*" >&2; }

req_hash=$(sha256sum "$here/requirements.txt" | cut -c1-12)
venv=$cache/python-consumer-$req_hash
if [[ ! -f $venv/.ready ]]; then
  . "$repo/scripts/python/venv.sh"
  # venv.sh's helper makes the environment (apt fallback for python3-venv) with the first
  # requirement; the rest of the file follows.
  python_tool_venv "$venv" "pip" pip
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
  touch "$venv/.ready"
fi

proto_hash=$( (cd "$repo" && find proto -name '*.proto' -print0 | sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-12)
gen=$cache/python-consumer-gen-$proto_hash
if [[ ! -f $gen/.ready ]]; then
  log "generating Python classes from proto/ into $gen"
  rm -rf "$gen" && mkdir -p "$gen"
  (cd "$repo/proto" && "$venv/bin/python" -m grpc_tools.protoc -I . --python_out="$gen" subx/events/v1/*.proto)
  touch "$gen/.ready"
fi

PYTHONPATH=$gen exec "$venv/bin/python" "$here/consumer.py" "$@"

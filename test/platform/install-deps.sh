#!/usr/bin/env bash
# Installs what the platform needs and the machine lacks: Debian packages (Redis, qpdf,
# Chromium, openssl) and the npm packages. Quick when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/../.."

need=()
command -v redis-server >/dev/null || need+=(redis-server)
command -v qpdf >/dev/null || need+=(qpdf)
command -v chromium >/dev/null || need+=(chromium)
command -v openssl >/dev/null || need+=(openssl)
command -v unshare >/dev/null || need+=(util-linux)
if [ ${#need[@]} -gt 0 ]; then
  echo "[deps] installing Debian packages: ${need[*]}"
  sudo_cmd=""
  [ "$(id -u)" = 0 ] || sudo_cmd=sudo
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

command -v go >/dev/null || { echo "[deps] Go is required to build the control plane (https://go.dev/dl/)"; exit 1; }

# schemathesis (from PyPI) fuzzes the running gateway against its own OpenAPI document.
cache=${DUTIL_CACHE:-$HOME/.cache/dutil}
st_version=4.32.5
if [ "$(cat "$cache/venv/.schemathesis" 2>/dev/null)" != "$st_version" ]; then
  echo "[deps] installing schemathesis $st_version into $cache/venv"
  python3 -m venv "$cache/venv"
  "$cache/venv/bin/pip" install -q --disable-pip-version-check "schemathesis==$st_version"
  echo "$st_version" >"$cache/venv/.schemathesis"
fi

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "[deps] installing npm packages"
  # npm 11's `npm ci` refuses this lock over platform-specific optional packages it leaves out
  # (npm/cli#4828, #9083); `npm install` installs exactly the same locked versions.
  npm ci --no-audit --no-fund --loglevel=silent 2>/dev/null || npm install --no-audit --no-fund --loglevel=error
fi

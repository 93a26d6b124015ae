#!/usr/bin/env bash
# Makes sure the pinned Chromium is installed, for the tests that load the dashboard in a headless
# browser. Idempotent: with that version installed it only says so; otherwise it installs it with
# apt (Debian 12), as root or through passwordless sudo. apt keeps the downloaded packages in its
# archive cache, so a reinstall does not download them again.
#
# Where Chromium cannot be installed (not Debian, no apt, not root), the script fails when the
# browser tests are required (CI=true, or KVBRIDGE_CHROMIUM_REQUIRED=true) and otherwise warns and
# succeeds: the build then skips those tests, each with the reason.
#
# With --check it installs nothing and always succeeds: it says which Chromium the browser tests
# will run in (BINARY, else chromium on the PATH), or warns that they will be skipped, or fail when
# required. The sample app's build runs it so, before its tests, so the reason shows in the build's
# output.
#
# Usage: scripts/ensure-chromium.sh [--check [BINARY]]
# Environment: CI, KVBRIDGE_CHROMIUM_REQUIRED (true/false; overrides CI).
set -euo pipefail

# Debian 12's security update of Chromium; chromium-common must be the same version.
version="156.0.8078.114-1~deb12u1"
packages=("chromium=$version" "chromium-common=$version" fonts-liberation)

required=${KVBRIDGE_CHROMIUM_REQUIRED:-}
[ -n "$required" ] || { [ "${CI:-}" = "true" ] && required=true || required=false; }

if [ "${1:-}" = "--check" ]; then
  binary=${2:-}
  # Maven passes an unresolved property through literally.
  case "$binary" in '${'*) binary="" ;; esac
  [ -n "$binary" ] || binary=$(command -v chromium || command -v chromium-browser || true)
  if [ -n "$binary" ] && found=$("$binary" --version 2>/dev/null); then
    echo "[ensure-chromium] the browser tests run in $found ($binary; pinned: $version)"
  elif [ "$required" = "true" ]; then
    echo "[ensure-chromium] ERROR: no Chromium runs here${binary:+ ($binary)}, and the browser tests are required (CI=true or kvbridge.chromium.required=true): they will fail; scripts/ensure-chromium.sh installs it" >&2
  else
    echo "[ensure-chromium] WARNING: no Chromium runs here${binary:+ ($binary)}: the browser tests will be skipped, each with the reason; scripts/ensure-chromium.sh installs it" >&2
  fi
  exit 0
fi

give_up() {
  if [ "$required" = "true" ]; then
    echo "[ensure-chromium] ERROR: Chromium $version is required but cannot be installed: $1" >&2
    echo "[ensure-chromium] Install it (apt-get install chromium=$version), or run the build outside CI" >&2
    echo "[ensure-chromium] (CI unset, or KVBRIDGE_CHROMIUM_REQUIRED=false) to skip the browser tests." >&2
    exit 1
  fi
  echo "[ensure-chromium] WARNING: Chromium $version is not installed: $1; the browser tests will be skipped" >&2
  exit 0
}

installed() {
  [ "$(dpkg-query -W -f='${db:Status-Status} ${Version}' chromium 2>/dev/null)" = "installed $version" ] &&
    [ -x /usr/bin/chromium ]
}

if command -v dpkg-query >/dev/null 2>&1 && installed; then
  echo "[ensure-chromium] chromium $version is installed (/usr/bin/chromium)"
  exit 0
fi

command -v apt-get >/dev/null 2>&1 || give_up "apt-get is not available (this script installs Debian 12's package)"
if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  give_up "installing needs root (or passwordless sudo)"
fi

apt_install() {
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    --allow-downgrades "${packages[@]}"
}

echo "[ensure-chromium] installing chromium $version with apt"
# The package lists may predate the pinned version: refresh them once if apt does not know it.
if ! apt-cache show "chromium=$version" >/dev/null 2>&1; then
  "${as_root[@]}" apt-get update -q || give_up "apt-get update failed"
  apt-cache show "chromium=$version" >/dev/null 2>&1 ||
    give_up "apt knows no chromium $version (is this Debian 12 with bookworm-security?)"
fi
apt_install || give_up "apt-get install ${packages[*]} failed"
installed || give_up "chromium $version is still not installed after apt-get install"
echo "[ensure-chromium] installed $(/usr/bin/chromium --version 2>/dev/null || echo "chromium $version")"

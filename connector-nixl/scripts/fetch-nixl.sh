#!/usr/bin/env bash
# Resolves the NIXL native libraries for the build and writes target/nixl/nixl.properties, which
# the POM reads back (library directory to link and test against, whether to build the JNI glue).
#
# Either an existing install is used (NIXL_HOME argument, -Dnixl.home or env KVBRIDGE_NIXL_HOME),
# or the pinned PyPI wheel is downloaded with pip, checked against its sha256 and its native
# libraries are unpacked into one flat directory:
#   target/nixl/lib/           libnixl*.so, libnixl_capi.so and the libraries the wheel bundles
#   target/nixl/lib/plugins/   NIXL backend plugins (NIXL's default: <dir of libnixl.so>/plugins)
#   target/nixl/lib/ucx/       UCX transport modules (UCX's default: <dir of libucs>/ucx)
# The RPATHs in the wheel ($ORIGIN, $ORIGIN/..) resolve inside that layout, so nothing needs
# LD_LIBRARY_PATH.
#
# Usage: fetch-nixl.sh TARGET_DIR PACKAGE VERSION PYTHON_TAG PLATFORM SHA256 REQUIRED [NIXL_HOME]
# Environment: KVBRIDGE_NIXL_CACHE (wheel cache, default ~/.cache/kvbridge/nixl),
#              KVBRIDGE_NIXL_WHEEL (use this wheel file instead of downloading), PYTHON (python3).
set -euo pipefail

target=$1 package=$2 version=$3 pytag=$4 platform=$5 sha=$6 required=$7 home=${8:-}
# Maven passes an unresolved property through literally.
case "$home" in '${'*) home="" ;; esac
[ -n "$home" ] || home=${KVBRIDGE_NIXL_HOME:-}

out="$target/nixl"
props="$out/nixl.properties"
mkdir -p "$out"

write_props() { # lib_dir skip source reason
  {
    echo "# written by fetch-nixl.sh"
    echo "kvbridge.nixl.lib.dir=$1"
    echo "kvbridge.nixl.native.skip=$2"
    echo "kvbridge.nixl.source=$3"
    echo "kvbridge.nixl.unavailable=$4"
  } >"$props"
}

give_up() {
  local reason="$1"
  if [ "$required" = "true" ]; then
    echo "[fetch-nixl] ERROR: NIXL is required (kvbridge.nixl.required=true) but cannot be obtained: $reason" >&2
    echo "[fetch-nixl] Fix the cause, or point the build at an install with -Dnixl.home=DIR (or KVBRIDGE_NIXL_HOME)," >&2
    echo "[fetch-nixl] or build without NIXL with -Dkvbridge.nixl.required=false (its tests are then skipped)." >&2
    rm -f "$props"
    exit 1
  fi
  echo "[fetch-nixl] WARNING: building without NIXL: $reason" >&2
  write_props "" true none "$reason"
  exit 0
}

# The directory holding libnixl_capi.so inside an install: the directory itself, a pip-installed
# wheel's site-packages, or a prefix.
find_lib_dir() {
  local d
  for d in "$1" "$1"/.nixl_cu13.mesonpy.libs "$1"/.nixl_cu12.mesonpy.libs "$1"/lib/x86_64-linux-gnu \
    "$1"/lib64 "$1"/lib; do
    if [ -f "$d/libnixl_capi.so" ]; then
      (cd "$d" && pwd)
      return 0
    fi
  done
  return 1
}

if [ -n "$home" ]; then
  [ -d "$home" ] || give_up "NIXL home '$home' is not a directory"
  lib=$(find_lib_dir "$home") || give_up "no libnixl_capi.so under NIXL home '$home' (looked in ., .nixl_cu13.mesonpy.libs, lib/x86_64-linux-gnu, lib64, lib)"
  echo "[fetch-nixl] using the NIXL install at $lib"
  write_props "$lib" false home ""
  exit 0
fi

python=${PYTHON:-python3}
wheel_name="${package//-/_}-$version-$pytag-$pytag-$platform.whl"
wheel_dir="$out/wheel"
wheel="$wheel_dir/$wheel_name"
lib="$out/lib"
stamp="$lib/.from-$sha"
cache=${KVBRIDGE_NIXL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kvbridge/nixl}

if [ -f "$stamp" ]; then
  echo "[fetch-nixl] $wheel_name already unpacked in $lib"
  write_props "$(cd "$lib" && pwd)" false wheel ""
  exit 0
fi

sha_of() { "$python" -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$1"; }
have_wheel() { [ -f "$wheel" ] && [ "$(sha_of "$wheel")" = "$sha" ]; }

command -v "$python" >/dev/null 2>&1 || give_up "'$python' is not on the PATH (pip downloads the $package wheel)"
mkdir -p "$wheel_dir"
if ! have_wheel && [ -n "${KVBRIDGE_NIXL_WHEEL:-}" ]; then
  cp "$KVBRIDGE_NIXL_WHEEL" "$wheel"
fi
if ! have_wheel && [ -f "$cache/$wheel_name" ]; then
  cp "$cache/$wheel_name" "$wheel"
fi
if ! have_wheel; then
  echo "[fetch-nixl] downloading $package==$version ($pytag, $platform) with pip"
  if ! "$python" -m pip download --quiet --no-deps --only-binary=:all: \
    --python-version "${pytag#cp}" --implementation cp --abi "$pytag" --platform "$platform" \
    -d "$wheel_dir" "$package==$version" >"$out/pip.log" 2>&1; then
    give_up "pip download of $package==$version failed: $(tail -n 3 "$out/pip.log" | tr '\n' ' ')"
  fi
  [ -f "$wheel" ] || give_up "pip did not produce $wheel_name in $wheel_dir"
fi
actual=$(sha_of "$wheel")
if [ "$actual" != "$sha" ]; then
  rm -f "$wheel"
  give_up "sha256 of $wheel_name is $actual, expected $sha (pinned in the parent pom as nixl.wheel.sha256)"
fi
if mkdir -p "$cache" 2>/dev/null && [ ! -f "$cache/$wheel_name" ]; then
  cp "$wheel" "$cache/$wheel_name.tmp" && mv "$cache/$wheel_name.tmp" "$cache/$wheel_name" || true
fi

rm -rf "$lib"
mkdir -p "$lib"
"$python" - "$wheel" "$lib" <<'PY' || give_up "cannot unpack $wheel"
import os, shutil, sys, zipfile

wheel, dest = sys.argv[1], sys.argv[2]
# (prefix in the wheel, sub-directory of dest). The wheel's second copy of the plugins under
# nixl_cu1X.libs/nixl/ is not the one NIXL loads and is left out.
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        parts = info.filename.split("/")
        if info.is_dir() or len(parts) < 2:
            continue
        top, rest = parts[0], parts[1:]
        if top.endswith(".mesonpy.libs") and (len(rest) == 1 or rest[0] == "plugins"):
            sub = rest
        elif top.endswith(".libs") and not top.startswith(".") and (len(rest) == 1 or rest[0] == "ucx"):
            sub = rest
        else:
            continue
        if not (".so" in sub[-1]):
            continue
        path = os.path.join(dest, *sub)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with z.open(info) as src, open(path, "wb") as out:
            shutil.copyfileobj(src, out)
PY
[ -f "$lib/libnixl_capi.so" ] || give_up "$wheel_name holds no libnixl_capi.so"
[ -f "$lib/plugins/libplugin_UCX.so" ] || give_up "$wheel_name holds no plugins/libplugin_UCX.so"
touch "$stamp"
echo "[fetch-nixl] unpacked $wheel_name into $lib ($(find "$lib" -type f | wc -l) files)"
write_props "$(cd "$lib" && pwd)" false wheel ""
